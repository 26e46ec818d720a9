package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/wavecd/wavecd/internal/sso"
)

// DefaultSessionTTL is how long a session token lives, as in Argo CD.
const DefaultSessionTTL = 24 * time.Hour

// SettingsSource reads the account settings; Store reads them from the
// cluster.
type SettingsSource interface {
	Settings(ctx context.Context) (*Settings, error)
}

// Options configure an Authenticator.
type Options struct {
	Settings SettingsSource
	// SessionTTL is the lifetime of session tokens (default
	// DefaultSessionTTL).
	SessionTTL time.Duration
	// Limiter throttles failed logins (default: NewLimiter's defaults).
	Limiter *Limiter
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SSO signs users in through the OpenID provider of argocd-cm's
	// oidc.config (default: a new sso.Client).
	SSO *sso.Client
}

// Authenticator logs users in and out and verifies their tokens.
type Authenticator struct {
	opts    Options
	revoked *revocations
}

// New returns an Authenticator.
func New(o Options) *Authenticator {
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Limiter == nil {
		o.Limiter = NewLimiter(LimiterOptions{Now: o.Now})
	}
	if o.SSO == nil {
		o.SSO = sso.New(sso.Options{SessionTTL: o.SessionTTL, Now: o.Now})
	}
	dummyHash() // now, so that the first login of an unknown user is not slower
	return &Authenticator{opts: o, revoked: newRevocations()}
}

// ErrBadCredentials says a login failed; the message does not say whether
// the user exists.
var ErrBadCredentials = errors.New("invalid username or password")

// ThrottledError says a login was refused without checking the password
// because of earlier failures.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed logins: retry in %s", e.RetryAfter.Round(time.Second))
}

// dummyHash is compared when the user does not exist, so a login takes
// as long for an unknown user as for a wrong password. New makes it, so a
// program that imports the package without logging users in (the CLI)
// does not pay for it at start-up.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("wavecd-no-such-user"), bcrypt.DefaultCost)
	return h
})

// Login checks a username and password from a client address and returns
// a session token and its claims. Errors: ErrBadCredentials,
// *ThrottledError, or a failure to read the settings.
func (a *Authenticator) Login(ctx context.Context, username, password, clientIP string) (string, Claims, error) {
	st, err := a.checkPassword(ctx, username, password, clientIP)
	if err != nil {
		return "", Claims{}, err
	}
	if len(st.SecretKey) == 0 {
		return "", Claims{}, errors.New("no signing key: argocd-secret has no server.secretkey")
	}
	id, err := newID()
	if err != nil {
		return "", Claims{}, err
	}
	now := a.opts.Now()
	c := Claims{
		Issuer: Issuer, Subject: username + ":" + CapabilityLogin, ID: id,
		IssuedAt: now.Unix(), NotBefore: now.Unix(), ExpiresAt: now.Add(a.opts.SessionTTL).Unix(),
	}
	token, err := Sign(st.SecretKey, c)
	return token, c, err
}

// checkPassword checks a login's password, throttled, and returns the
// settings it read.
func (a *Authenticator) checkPassword(ctx context.Context, username, password, clientIP string) (*Settings, error) {
	if wait := a.opts.Limiter.Wait(username, clientIP); wait > 0 {
		return nil, &ThrottledError{RetryAfter: wait}
	}
	st, err := a.opts.Settings.Settings(ctx)
	if err != nil {
		return nil, err
	}
	acct := st.Accounts[username]
	usable := acct != nil && acct.Enabled && acct.Has(CapabilityLogin) && acct.PasswordHash != ""
	var hash []byte
	if usable {
		hash = []byte(acct.PasswordHash)
	} else {
		hash = dummyHash()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || !usable {
		a.opts.Limiter.Failed(username, clientIP)
		return nil, ErrBadCredentials
	}
	a.opts.Limiter.Succeeded(username)
	return st, nil
}

// Verify checks a token (see the package doc for the rules) and returns
// its claims. A refused token is an *InvalidTokenError.
func (a *Authenticator) Verify(ctx context.Context, token string) (Claims, error) {
	c, _, err := a.VerifyOrRenew(ctx, token)
	return c, err
}

// verifyLocal checks a token wavecd signed.
func (a *Authenticator) verifyLocal(st *Settings, token string) (Claims, error) {
	now := a.opts.Now()
	c, err := Verify(st.SecretKey, token, now)
	if err != nil {
		return Claims{}, err
	}
	if a.revoked.revoked(c.ID) {
		return Claims{}, invalid("token has been revoked")
	}
	acct := st.Accounts[c.Username()]
	if acct == nil || !acct.Enabled {
		return Claims{}, invalid("account %q is disabled or does not exist", c.Username())
	}
	switch c.Capability() {
	case CapabilityLogin:
		if !acct.Has(CapabilityLogin) {
			return Claims{}, invalid("account %q does not have the login capability", acct.Name)
		}
		if !acct.PasswordMtime.IsZero() && acct.PasswordMtime.After(time.Unix(c.IssuedAt, 0)) {
			return Claims{}, invalid("the password changed since this session started")
		}
	case CapabilityAPIKey:
		if !acct.Has(CapabilityAPIKey) || !hasToken(acct.Tokens, c.ID) {
			return Claims{}, invalid("API token of %q is no longer valid", acct.Name)
		}
	default:
		return Claims{}, invalid("unknown token subject")
	}
	return c, nil
}

func hasToken(tokens []TokenRecord, id string) bool {
	for _, t := range tokens {
		if t.ID == id {
			return true
		}
	}
	return false
}

// Logout revokes a session token until it expires; a sign-in through
// the provider is no longer renewed either.
func (a *Authenticator) Logout(c Claims) {
	a.revoked.revoke(c.ID, c.Expires(), a.opts.Now())
	if c.SSO != nil {
		a.opts.SSO.Forget(c.SSO)
	}
}
