package sso_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/sso"
	"github.com/wavecd/wavecd/internal/testenv/idp"
)

const serverURL = "https://wavecd.example.test"

var secretKey = []byte("0123456789abcdef0123456789abcdef")

func startProvider(t *testing.T, lifetime time.Duration) *idp.Provider {
	t.Helper()
	p, err := idp.Start(idp.Options{
		Users: []idp.User{
			{ID: "u1", Username: "alice", Password: "alice-pass", Email: "alice@example.test", Groups: []string{"my-org:platform"}},
			{ID: "u2", Username: "bob", Password: "bob-pass", Email: "bob@example.test"},
		},
		Clients:         []idp.Client{{ID: "wavecd", Secret: "wavecd-secret", RedirectURIs: []string{serverURL + sso.CallbackPath}}},
		IDTokenLifetime: lifetime,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func config(t *testing.T, p *idp.Provider, extra string) *sso.Config {
	t.Helper()
	data := map[string]string{
		"url":         serverURL,
		"oidc.config": "name: Example\nissuer: " + p.Issuer + "\nclientID: wavecd\nclientSecret: $oidc.clientSecret\n" + extra,
	}
	cfg, err := sso.ParseConfig(context.Background(), data, func(_ context.Context, ref settings.SecretRef) (string, error) {
		if ref != (settings.SecretRef{Secret: "argocd-secret", Key: "oidc.clientSecret"}) {
			t.Fatalf("lookup of %+v", ref)
		}
		return "wavecd-secret", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// signIn runs a whole sign-in as the user and returns the session.
func signIn(t *testing.T, c *sso.Client, p *idp.Provider, cfg *sso.Config, user, pass string) sso.Session {
	t.Helper()
	ctx := context.Background()
	login, err := c.StartLogin(ctx, cfg, secretKey, serverURL+"/applications/guestbook")
	if err != nil {
		t.Fatal(err)
	}
	auth, _ := url.Parse(login.AuthURL)
	if auth.Query().Get("code_challenge_method") != "S256" || auth.Query().Get("code_challenge") == "" {
		t.Errorf("the authorization request has no PKCE challenge: %s", login.AuthURL)
	}
	back, err := p.SignIn(ctx, login.AuthURL, user, pass)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != cfg.RedirectURL() {
		t.Fatalf("the provider sent the browser to %s, want %s", got, cfg.RedirectURL())
	}
	s, err := c.Callback(ctx, cfg, secretKey, back.Query().Get("code"), back.Query().Get("state"), login.State)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignIn(t *testing.T) {
	p := startProvider(t, time.Hour)
	cfg := config(t, p, "")
	c := sso.New(sso.Options{})
	s := signIn(t, c, p, cfg, "alice", "alice-pass")
	if s.ReturnURL != serverURL+"/applications/guestbook" {
		t.Errorf("return URL %q", s.ReturnURL)
	}
	if sso.StringClaim(s.Claims, "sub") != "u1" || sso.StringClaim(s.Claims, "email") != "alice@example.test" {
		t.Errorf("claims %v", s.Claims)
	}
	if g, _ := s.Claims["groups"].([]any); len(g) != 1 || g[0] != "my-org:platform" {
		t.Errorf("groups claim %v", s.Claims["groups"])
	}
	claims, err := c.Verify(context.Background(), cfg, s.IDToken)
	if err != nil || sso.StringClaim(claims, "sub") != "u1" {
		t.Fatalf("verify the session: %v %v", claims, err)
	}
	// A token whose payload was changed fails its signature.
	parts := strings.Split(s.IDToken, ".")
	forged := parts[0] + "." + strings.Replace(parts[1], parts[1][:8], "eyJzdWIi", 1) + "." + parts[2]
	if _, err := c.Verify(context.Background(), cfg, forged); err == nil {
		t.Error("a forged token verified")
	}
	// A token for another audience is refused.
	other := config(t, p, "allowedAudiences: [someone-else]\n")
	if _, err := c.Verify(context.Background(), other, s.IDToken); err == nil || !strings.Contains(err.Error(), "someone-else") {
		t.Errorf("verify for another audience: %v", err)
	}
	// Past its expiry it is a TokenExpiredError.
	late := sso.New(sso.Options{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	var expired *sso.TokenExpiredError
	if claims, err := late.Verify(context.Background(), cfg, s.IDToken); !errors.As(err, &expired) || sso.StringClaim(claims, "sub") != "u1" {
		t.Errorf("verify an expired token: %v %v", claims, err)
	}
	// An expired token is still checked for its signature.
	if claims, err := late.Verify(context.Background(), cfg, forged); err == nil || errors.As(err, &expired) || claims != nil {
		t.Errorf("verify an expired forged token: %v %v", claims, err)
	}
}

func TestSignInRefused(t *testing.T) {
	p := startProvider(t, time.Hour)
	cfg := config(t, p, "")
	c := sso.New(sso.Options{})
	ctx := context.Background()
	if _, err := c.StartLogin(ctx, cfg, secretKey, "https://evil.example.test/applications"); err == nil {
		t.Error("a return URL on another host was accepted")
	}
	login, err := c.StartLogin(ctx, cfg, secretKey, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SignIn(ctx, login.AuthURL, "alice", "wrong"); err == nil {
		t.Error("the provider accepted a wrong password")
	}
	back, err := p.SignIn(ctx, login.AuthURL, "alice", "alice-pass")
	if err != nil {
		t.Fatal(err)
	}
	code, state := back.Query().Get("code"), back.Query().Get("state")
	cases := map[string]struct {
		state, cookie string
		key           []byte
		want          string
	}{
		"no cookie":          {state: state, key: secretKey, want: "no sign-in state cookie"},
		"another state":      {state: "other", cookie: login.State, key: secretKey, want: "does not match"},
		"an altered cookie":  {state: state, cookie: login.State[:len(login.State)-2] + "AA", key: secretKey, want: "does not decrypt"},
		"another server key": {state: state, cookie: login.State, key: []byte("another key"), want: "does not decrypt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := c.Callback(ctx, cfg, tc.key, code, tc.state, tc.cookie); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	if s, err := c.Callback(ctx, cfg, secretKey, code, state, login.State); err != nil || s.ReturnURL != serverURL+"/" {
		t.Errorf("the good callback after the refused ones: %v %v", s.ReturnURL, err)
	}
	slow := sso.New(sso.Options{Now: func() time.Time { return time.Now().Add(sso.StateTTL + time.Minute) }})
	if _, err := slow.Callback(ctx, cfg, secretKey, code, state, login.State); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("a callback after the state expired: %v", err)
	}
}

func TestRefresh(t *testing.T) {
	p := startProvider(t, 10*time.Minute)
	ctx := context.Background()
	c := sso.New(sso.Options{})
	cfg := config(t, p, "refreshTokenThreshold: 5m\nrequestedScopes: [openid, profile, email, groups, offline_access]\n")
	s := signIn(t, c, p, cfg, "alice", "alice-pass")
	if tok, _, err := c.Refresh(ctx, cfg, s.IDToken, s.Claims); tok != "" || err != nil || p.Refreshes() != 0 {
		t.Fatalf("a fresh session was refreshed: %q %v", tok, err)
	}
	// Seven minutes on, the token is within the threshold of its expiry.
	later := sso.New(sso.Options{Now: func() time.Time { return time.Now().Add(7 * time.Minute) }})
	s = signIn(t, later, p, cfg, "alice", "alice-pass")
	tok, claims, err := later.Refresh(ctx, cfg, s.IDToken, s.Claims)
	if err != nil || tok == "" || tok == s.IDToken || p.Refreshes() != 1 {
		t.Fatalf("refresh within the threshold: new=%v err=%v refreshes=%d", tok != "", err, p.Refreshes())
	}
	if sso.StringClaim(claims, "sub") != "u1" {
		t.Errorf("refreshed claims %v", claims)
	}
	// A second request with the old token gets the new one, without
	// another grant.
	if again, _, err := later.Refresh(ctx, cfg, s.IDToken, s.Claims); err != nil || again != tok || p.Refreshes() != 1 {
		t.Errorf("second refresh: same=%v err=%v refreshes=%d", again == tok, err, p.Refreshes())
	}
	// After a logout the session is not renewed.
	later.Forget(s.Claims)
	if tok, _, err := later.Refresh(ctx, cfg, s.IDToken, s.Claims); tok != "" || err != nil {
		t.Errorf("refresh after logout: %q %v", tok, err)
	}
}
