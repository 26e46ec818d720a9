package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/wavecd/wavecd/internal/sso"
)

// Renewal is a session the provider renewed while a request was verified:
// the client should keep Token instead of the one it sent.
type Renewal struct {
	Token   string
	Expires time.Time
}

// VerifyOrRenew is Verify, and for a sign-in through the OpenID provider
// it also renews a session within oidc.config's refreshTokenThreshold of
// its expiry, or past it, with the refresh token kept at sign-in. The
// renewed session's claims are returned with the new token.
func (a *Authenticator) VerifyOrRenew(ctx context.Context, token string) (Claims, *Renewal, error) {
	st, err := a.opts.Settings.Settings(ctx)
	if err != nil {
		return Claims{}, nil, err
	}
	if !isSSOToken(token) {
		c, err := a.verifyLocal(st, token)
		return c, nil, err
	}
	if st.SSO == nil {
		return Claims{}, nil, invalid("the token is from an OpenID provider, and sign-in through one is not configured")
	}
	claims, verr := a.opts.SSO.Verify(ctx, st.SSO, token)
	var expired *sso.TokenExpiredError
	if verr != nil && !errors.As(verr, &expired) {
		return Claims{}, nil, invalid("%v", verr)
	}
	c := ssoClaims(token, claims)
	if a.revoked.revoked(c.ID) {
		return Claims{}, nil, invalid("token has been revoked")
	}
	renewed, newClaims, err := a.opts.SSO.Refresh(ctx, st.SSO, token, claims)
	if err != nil || renewed == "" {
		if verr != nil {
			return Claims{}, nil, invalid("%v", verr)
		}
		return c, nil, nil // a failed renewal leaves a good token good
	}
	nc := ssoClaims(renewed, newClaims)
	return nc, &Renewal{Token: renewed, Expires: nc.Expires()}, nil
}

// isSSOToken reports whether a token names an issuer other than wavecd.
func isSSOToken(token string) bool {
	claims, err := sso.UnverifiedClaims(token)
	if err != nil {
		return false
	}
	iss, _ := claims["iss"].(string)
	return iss != "" && iss != Issuer
}

// ssoClaims are an ID token's claims as Claims. Its id is jti, or, for a
// provider that sets none, a hash of the token.
func ssoClaims(token string, m map[string]any) Claims {
	c := Claims{Issuer: sso.StringClaim(m, "iss"), Subject: sso.StringClaim(m, "sub"), ID: sso.StringClaim(m, "jti"), SSO: m}
	c.IssuedAt, _ = sso.NumericClaim(m, "iat")
	c.ExpiresAt, _ = sso.NumericClaim(m, "exp")
	if c.ID == "" {
		sum := sha256.Sum256([]byte(token))
		c.ID = "sha256:" + hex.EncodeToString(sum[:])
	}
	return c
}

// Settings reads the settings authentication works with.
func (a *Authenticator) Settings(ctx context.Context) (*Settings, error) {
	return a.opts.Settings.Settings(ctx)
}

// SSO is the client that signs users in through the OpenID provider.
func (a *Authenticator) SSO() *sso.Client { return a.opts.SSO }
