package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Issuer is the iss claim of every token wavecd signs, as in Argo CD.
const Issuer = "argocd"

// Token subjects end in the capability they use.
const (
	CapabilityLogin  = "login"
	CapabilityAPIKey = "apiKey"
)

// Claims are the claims of a token.
type Claims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf,omitempty"`
	ExpiresAt int64  `json:"exp,omitempty"`
	ID        string `json:"jti"`
	// SSO holds every claim of an ID token from the OpenID provider; nil
	// for a token wavecd signed.
	SSO map[string]any `json:"-"`
}

// Username is who the token belongs to: for a token wavecd signed, the
// account (sub without its capability suffix); for a sign-in through the
// provider, Argo CD's user identifier: federated_claims.user_id when
// present (Dex), else sub.
func (c Claims) Username() string {
	if c.SSO != nil {
		if fed, ok := c.SSO["federated_claims"].(map[string]any); ok {
			if id, _ := fed["user_id"].(string); id != "" {
				return id
			}
		}
		return c.Subject
	}
	name, _, _ := strings.Cut(c.Subject, ":")
	return name
}

// Capability is the capability the token was issued for: login or apiKey
// (a sign-in through the provider is a login).
func (c Claims) Capability() string {
	if c.SSO != nil {
		return CapabilityLogin
	}
	_, capability, _ := strings.Cut(c.Subject, ":")
	return capability
}

// Expires is the expiry time; zero when the token does not expire.
func (c Claims) Expires() time.Time {
	if c.ExpiresAt == 0 {
		return time.Time{}
	}
	return time.Unix(c.ExpiresAt, 0)
}

// InvalidTokenError says a token was refused; Reason is safe to show.
type InvalidTokenError struct {
	Reason string
}

func (e *InvalidTokenError) Error() string { return "invalid session: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidTokenError{Reason: fmt.Sprintf(format, args...)}
}

// header is the only JOSE header wavecd signs and accepts.
var header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// Sign encodes c as a JWT signed with key (HMAC-SHA256).
func Sign(key []byte, c Claims) (string, error) {
	if len(key) == 0 {
		return "", errors.New("sign token: empty signing key")
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	unsigned := header + "." + base64.RawURLEncoding.EncodeToString(payload)
	return unsigned + "." + signature(key, unsigned), nil
}

func signature(key []byte, unsigned string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(unsigned))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks token's signature with key and its iss, nbf and exp
// against now, and returns its claims. Any failure is an
// *InvalidTokenError.
func Verify(key []byte, token string, now time.Time) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, invalid("malformed token")
	}
	if !hmac.Equal([]byte(parts[0]), []byte(header)) {
		return Claims{}, invalid("unsupported token header")
	}
	want := signature(key, parts[0]+"."+parts[1])
	if len(key) == 0 || !hmac.Equal([]byte(parts[2]), []byte(want)) {
		return Claims{}, invalid("bad signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Claims{}, invalid("malformed claims")
	}
	var c Claims
	if err := json.Unmarshal(raw, &c); err != nil {
		return Claims{}, invalid("malformed claims")
	}
	switch {
	case c.Issuer != Issuer:
		return Claims{}, invalid("unknown issuer")
	case c.Subject == "" || c.ID == "":
		return Claims{}, invalid("token lacks sub or jti")
	case c.NotBefore != 0 && now.Before(time.Unix(c.NotBefore, 0).Add(-clockSkew)):
		return Claims{}, invalid("token not valid yet")
	case c.ExpiresAt != 0 && !now.Before(time.Unix(c.ExpiresAt, 0)):
		return Claims{}, invalid("token has expired")
	}
	return c, nil
}

// clockSkew tolerates clocks of replicas that differ a little.
const clockSkew = 5 * time.Second

// newID returns a random token id.
func newID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
