package sso

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Login is where a sign-in starts.
type Login struct {
	// AuthURL is the provider's authorization endpoint with the request.
	AuthURL string
	// State is the state cookie's value.
	State string
}

// InvalidReturnURLError refuses a return URL outside the server's URL.
type InvalidReturnURLError struct{ URL string }

func (e *InvalidReturnURLError) Error() string {
	return "invalid redirect URL: the protocol and host (including port) must match the server's url and the path must be within it"
}

// StartLogin prepares the redirect to the provider. returnURL is where
// the browser goes after the callback; it must lie within cfg.URL.
func (c *Client) StartLogin(ctx context.Context, cfg *Config, secretKey []byte, returnURL string) (Login, error) {
	if returnURL == "" {
		returnURL = cfg.URL + "/"
	}
	if !Within(cfg.URL, returnURL) {
		return Login{}, &InvalidReturnURLError{URL: returnURL}
	}
	p, err := c.provider(ctx, cfg)
	if err != nil {
		return Login{}, err
	}
	nonce, err := randomString()
	if err != nil {
		return Login{}, err
	}
	st := loginState{Nonce: nonce, ReturnURL: returnURL, Expires: c.opts.Now().Add(StateTTL).Unix()}
	var opts []oauth2.AuthCodeOption
	if p.pkce || cfg.EnablePKCEAuthentication {
		st.Verifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(st.Verifier))
	}
	if len(cfg.RequestedIDTokenClaims) > 0 {
		b, err := json.Marshal(map[string]any{"id_token": cfg.RequestedIDTokenClaims})
		if err != nil {
			return Login{}, err
		}
		opts = append(opts, oauth2.SetAuthURLParam("claims", string(b)))
	}
	sealed, err := sealState(secretKey, st)
	if err != nil {
		return Login{}, err
	}
	return Login{AuthURL: p.oauth2Config(cfg, cfg.ClientID).AuthCodeURL(nonce, opts...), State: sealed}, nil
}

// Session is a completed sign-in.
type Session struct {
	// IDToken is the raw ID token: the session token.
	IDToken string
	// Claims are its verified claims.
	Claims map[string]any
	// ReturnURL is where the browser goes next.
	ReturnURL string
}

// Callback completes a sign-in: it checks the state against its cookie,
// exchanges the code and verifies the ID token. The refresh token, when
// the provider gives one, is kept for Refresh.
func (c *Client) Callback(ctx context.Context, cfg *Config, secretKey []byte, code, state, stateCookie string) (Session, error) {
	if stateCookie == "" {
		return Session{}, errors.New("no sign-in state cookie: start the sign-in from this server's login page")
	}
	st, err := openState(secretKey, stateCookie, c.opts.Now())
	if err != nil {
		return Session{}, err
	}
	if subtle.ConstantTimeCompare([]byte(st.Nonce), []byte(state)) != 1 {
		return Session{}, errors.New("the sign-in state does not match its cookie")
	}
	if !Within(cfg.URL, st.ReturnURL) {
		return Session{}, &InvalidReturnURLError{URL: st.ReturnURL}
	}
	p, err := c.provider(ctx, cfg)
	if err != nil {
		return Session{}, err
	}
	var opts []oauth2.AuthCodeOption
	if st.Verifier != "" {
		opts = append(opts, oauth2.VerifierOption(st.Verifier))
	}
	tok, err := p.oauth2Config(cfg, cfg.ClientID).Exchange(gooidc.ClientContext(ctx, p.http), code, opts...)
	if err != nil {
		return Session{}, fmt.Errorf("exchange the code at %s: %w", cfg.Issuer, err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Session{}, errors.New("the provider's token response has no id_token")
	}
	claims, err := c.Verify(ctx, cfg, raw)
	if err != nil {
		return Session{}, fmt.Errorf("verify the ID token: %w", err)
	}
	if tok.RefreshToken != "" {
		c.sessions.put(sessionKey(claims), tok.RefreshToken, raw, c.opts.SessionTTL)
	}
	return Session{IDToken: raw, Claims: claims, ReturnURL: st.ReturnURL}, nil
}

// Within reports whether target lies within base: same scheme and host
// (with port), and a path under base's. Argo CD's rule for return URLs.
func Within(base, target string) bool {
	b, err := url.Parse(base)
	if err != nil {
		return false
	}
	t, err := url.Parse(target)
	if err != nil || strings.ContainsAny(t.Path, "\r\n") || t.User != nil {
		return false
	}
	bp, tp := b.Path, t.Path
	if bp == "" {
		bp = "/"
	}
	if tp == "" {
		tp = "/"
	}
	if b.Scheme != t.Scheme || b.Host != t.Host {
		return false
	}
	clean := path.Clean(tp)
	return strings.HasPrefix(clean, strings.TrimRight(bp, "/")+"/") || clean == strings.TrimRight(bp, "/") || bp == "/"
}

func randomString() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
