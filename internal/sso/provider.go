package sso

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Options configure a Client.
type Options struct {
	// SessionTTL bounds how long a login's refresh token is kept (default
	// 24h, Argo CD's session duration).
	SessionTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Client signs users in through the configured provider. One serves
// every Config it is given: providers are discovered once per issuer and
// root CA, and kept.
type Client struct {
	opts      Options
	mu        sync.Mutex
	providers map[string]*provider
	sessions  *sessions
}

// provider is a discovered provider and the HTTP client that reaches it.
type provider struct {
	*gooidc.Provider
	http *http.Client
	pkce bool // it offers code_challenge_method S256
}

// New returns a Client.
func New(o Options) *Client {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{opts: o, providers: map[string]*provider{}, sessions: newSessions(o.Now)}
}

// TokenExpiredError says an ID token is past its expiry.
type TokenExpiredError struct{ Expiry time.Time }

func (e *TokenExpiredError) Error() string {
	return fmt.Sprintf("the sign-in expired at %s", e.Expiry.UTC().Format(time.RFC3339))
}

// provider discovers cfg's issuer, or returns the one found before.
func (c *Client) provider(ctx context.Context, cfg *Config) (*provider, error) {
	key := cfg.Issuer + "\x00" + cfg.RootCA
	c.mu.Lock()
	p := c.providers[key]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	hc, err := httpClient(cfg.RootCA)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// The provider keeps the context's client to fetch its keys later, so
	// the client goes on a context that is not cancelled.
	discovered, err := gooidc.NewProvider(gooidc.ClientContext(context.WithoutCancel(dctx), hc), cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover OpenID provider %s: %w", cfg.Issuer, err)
	}
	var meta struct {
		Methods []string `json:"code_challenge_methods_supported"`
	}
	_ = discovered.Claims(&meta)
	p = &provider{Provider: discovered, http: hc}
	for _, m := range meta.Methods {
		p.pkce = p.pkce || m == "S256"
	}
	c.mu.Lock()
	c.providers[key] = p
	c.mu.Unlock()
	return p, nil
}

// httpClient trusts rootCA (PEM) on top of the system's roots.
func httpClient(rootCA string) (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if strings.TrimSpace(rootCA) != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(rootCA)) {
			return nil, errors.New("oidc.config rootCA holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: t, Timeout: 30 * time.Second}, nil
}

// oauth2Config is the client's OAuth 2.0 configuration for redirectURL.
func (p *provider) oauth2Config(cfg *Config, clientID string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: clientID, ClientSecret: cfg.ClientSecret,
		Endpoint: p.Endpoint(), Scopes: cfg.Scopes(), RedirectURL: cfg.RedirectURL(),
	}
}

// Verify checks an ID token's signature, issuer, expiry and audience and
// returns its claims. A token that is good but for its expiry returns its
// claims with a *TokenExpiredError: the session may be renewed (Refresh),
// not used.
func (c *Client) Verify(ctx context.Context, cfg *Config, raw string) (map[string]any, error) {
	p, err := c.provider(ctx, cfg)
	if err != nil {
		return nil, err
	}
	hasAud, err := hasAudience(raw)
	if err != nil {
		return nil, err
	}
	audiences := cfg.Audiences()
	skip := !hasAud && cfg.SkipAudienceCheckWhenTokenHasNoAudience != nil && *cfg.SkipAudienceCheckWhenTokenHasNoAudience
	if !hasAud && !skip {
		return nil, errors.New("the token has no audience (set skipAudienceCheckWhenTokenHasNoAudience to accept it)")
	}
	if skip {
		audiences = []string{""}
	}
	ctx = gooidc.ClientContext(ctx, p.http)
	var lastErr error
	for _, aud := range audiences {
		v := p.Verifier(&gooidc.Config{ClientID: aud, SkipClientIDCheck: aud == "", Now: c.opts.Now})
		tok, err := v.Verify(ctx, raw)
		var expired *gooidc.TokenExpiredError
		if errors.As(err, &expired) {
			// The signature was good (it is checked first); read the
			// claims, which renew the session, without the expiry check.
			v = p.Verifier(&gooidc.Config{ClientID: aud, SkipClientIDCheck: aud == "", SkipExpiryCheck: true, Now: c.opts.Now})
			if tok, err = v.Verify(ctx, raw); err != nil {
				return nil, fmt.Errorf("verify token: %w", err)
			}
			claims, err := idClaims(tok)
			if err != nil {
				return nil, err
			}
			return claims, &TokenExpiredError{Expiry: expired.Expiry}
		}
		if err != nil {
			lastErr = err
			continue
		}
		return idClaims(tok)
	}
	return nil, fmt.Errorf("verify token for audiences %v: %w", cfg.Audiences(), lastErr)
}

func idClaims(tok *gooidc.IDToken) (map[string]any, error) {
	claims := map[string]any{}
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("read token claims: %w", err)
	}
	return claims, nil
}

// hasAudience reports whether an unverified JWT carries an aud claim.
func hasAudience(raw string) (bool, error) {
	claims, err := UnverifiedClaims(raw)
	if err != nil {
		return false, err
	}
	_, ok := claims["aud"]
	return ok, nil
}

// UnverifiedClaims decodes a JWT's payload without checking it: for
// routing a token to its verifier and for reading an expired token's
// subject, never for trusting it.
func UnverifiedClaims(raw string) (map[string]any, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, errors.New("malformed token")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("malformed token payload")
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, errors.New("malformed token claims")
	}
	return claims, nil
}
