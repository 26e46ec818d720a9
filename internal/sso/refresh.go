package sso

import (
	"context"
	"fmt"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// maxSessions bounds the refresh tokens kept; the oldest go first.
const maxSessions = 10000

// sessions keeps each login's refresh token, by subject and session id,
// until the session's lifetime ends.
type sessions struct {
	now  func() time.Time
	mu   sync.Mutex
	byID map[string]*refreshable
}

// refreshable is one login's refresh state. mu serializes its refreshes,
// so a rotating refresh token is used once.
type refreshable struct {
	mu           sync.Mutex
	refreshToken string
	idToken      string // the newest ID token issued for it
	ends         time.Time
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byID: map[string]*refreshable{}}
}

func sessionKey(claims map[string]any) string {
	return StringClaim(claims, "iss") + "\x00" + StringClaim(claims, "sub") + "\x00" + StringClaim(claims, "sid")
}

func (s *sessions) put(key, refreshToken, idToken string, ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, r := range s.byID {
		if now.After(r.ends) {
			delete(s.byID, k)
		}
	}
	if len(s.byID) >= maxSessions {
		var oldest string
		for k, r := range s.byID {
			if oldest == "" || r.ends.Before(s.byID[oldest].ends) {
				oldest = k
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[key] = &refreshable{refreshToken: refreshToken, idToken: idToken, ends: now.Add(ttl)}
}

func (s *sessions) get(key string) *refreshable {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.byID[key]
	if r != nil && s.now().After(r.ends) {
		delete(s.byID, key)
		return nil
	}
	return r
}

// Forget drops the refresh token of the session claims belong to: after a
// logout it is not renewed.
func (c *Client) Forget(claims map[string]any) {
	c.sessions.mu.Lock()
	delete(c.sessions.byID, sessionKey(claims))
	c.sessions.mu.Unlock()
}

// Refresh renews a session whose ID token raw, with its claims as Verify
// returned them (for an expired token too), expires within cfg's
// threshold. It returns the new ID token and its claims, or "" when no
// renewal is due or none is possible (no refresh token kept for it).
func (c *Client) Refresh(ctx context.Context, cfg *Config, raw string, claims map[string]any) (string, map[string]any, error) {
	exp, ok := NumericClaim(claims, "exp")
	left := time.Unix(exp, 0).Sub(c.opts.Now())
	if !ok || left > 0 && left >= cfg.Threshold() {
		return "", nil, nil
	}
	r := c.sessions.get(sessionKey(claims))
	if r == nil {
		return "", nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idToken != raw {
		if newer, err := c.Verify(ctx, cfg, r.idToken); err == nil {
			return r.idToken, newer, nil // another request renewed it since raw was issued
		}
	}
	p, err := c.provider(ctx, cfg)
	if err != nil {
		return "", nil, err
	}
	src := p.oauth2Config(cfg, cfg.ClientID).TokenSource(gooidc.ClientContext(ctx, p.http), &oauth2.Token{RefreshToken: r.refreshToken})
	tok, err := src.Token()
	if err != nil {
		return "", nil, fmt.Errorf("refresh the session at %s: %w", cfg.Issuer, err)
	}
	renewed, _ := tok.Extra("id_token").(string)
	if renewed == "" {
		return "", nil, fmt.Errorf("refresh the session at %s: the response has no id_token", cfg.Issuer)
	}
	newClaims, err := c.Verify(ctx, cfg, renewed)
	if err != nil {
		return "", nil, fmt.Errorf("verify the refreshed ID token: %w", err)
	}
	if tok.RefreshToken != "" {
		r.refreshToken = tok.RefreshToken
	}
	r.idToken = renewed
	return renewed, newClaims, nil
}

// StringClaim is a string claim, "" when absent or of another type.
func StringClaim(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

// NumericClaim is a numeric claim (a JSON number), in whole units.
func NumericClaim(claims map[string]any, name string) (int64, bool) {
	switch v := claims[name].(type) {
	case float64:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}
