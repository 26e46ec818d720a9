package auth

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// staticSettings is a SettingsSource a test edits.
type staticSettings struct{ s *Settings }

func (s staticSettings) Settings(context.Context) (*Settings, error) { return s.s, nil }

func testSettings(t *testing.T) *Settings {
	t.Helper()
	hash, err := HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return &Settings{
		SecretKey: []byte("signing-key-signing-key-signing!"),
		Accounts: map[string]*Account{
			"admin": {Name: "admin", Enabled: true, Capabilities: []string{CapabilityLogin}, PasswordHash: hash},
			"off":   {Name: "off", Enabled: false, Capabilities: []string{CapabilityLogin}, PasswordHash: hash},
			"bot":   {Name: "bot", Enabled: true, Capabilities: []string{CapabilityAPIKey}, PasswordHash: hash},
		},
	}
}

func TestLogin(t *testing.T) {
	tests := map[string]struct {
		user, password string
		wantErr        error
	}{
		"right password":         {user: "admin", password: "s3cret"},
		"wrong password":         {user: "admin", password: "nope", wantErr: ErrBadCredentials},
		"unknown user":           {user: "mallory", password: "s3cret", wantErr: ErrBadCredentials},
		"disabled account":       {user: "off", password: "s3cret", wantErr: ErrBadCredentials},
		"apiKey-only account":    {user: "bot", password: "s3cret", wantErr: ErrBadCredentials},
		"empty password":         {user: "admin", password: "", wantErr: ErrBadCredentials},
		"case matters in a name": {user: "Admin", password: "s3cret", wantErr: ErrBadCredentials},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := New(Options{Settings: staticSettings{testSettings(t)}})
			token, c, err := a.Login(t.Context(), tc.user, tc.password, "10.1.1.1")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Login error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			got, err := a.Verify(t.Context(), token)
			if err != nil {
				t.Fatalf("Verify the new token: %v", err)
			}
			if !reflect.DeepEqual(got, c) || got.Subject != "admin:login" || got.ExpiresAt-got.IssuedAt != int64(DefaultSessionTTL/time.Second) {
				t.Errorf("claims %+v, login returned %+v", got, c)
			}
		})
	}
}

func TestLoginThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Unix(2_000_000_000, 0)}
	a := New(Options{Settings: staticSettings{testSettings(t)}, Now: clock.now})
	for range 5 {
		if _, _, err := a.Login(t.Context(), "admin", "guess", "10.0.0.9"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("failed login: %v", err)
		}
	}
	_, _, err := a.Login(t.Context(), "admin", "s3cret", "10.0.0.9")
	var te *ThrottledError
	if !errors.As(err, &te) || te.RetryAfter != time.Second {
		t.Fatalf("sixth login (right password) error = %v, want throttled for 1s", err)
	}
	clock.advance(time.Second)
	if _, _, err := a.Login(t.Context(), "admin", "s3cret", "10.0.0.9"); err != nil {
		t.Fatalf("login after the delay: %v", err)
	}
}

func TestVerifySessionRules(t *testing.T) {
	clock := &fakeClock{t: time.Unix(2_000_000_000, 0)}
	st := testSettings(t)
	a := New(Options{Settings: staticSettings{st}, Now: clock.now, SessionTTL: time.Hour})
	login := func() (string, Claims) {
		tok, c, err := a.Login(t.Context(), "admin", "s3cret", "ip")
		if err != nil {
			t.Fatal(err)
		}
		return tok, c
	}
	refused := func(what, tok, reason string) {
		t.Helper()
		_, err := a.Verify(t.Context(), tok)
		var ite *InvalidTokenError
		if !errors.As(err, &ite) || ite.Reason != reason {
			t.Errorf("%s: Verify error = %v, want %q", what, err, reason)
		}
	}
	tok, c := login()
	other, _ := login()
	a.Logout(c)
	refused("after logout", tok, "token has been revoked")
	if _, err := a.Verify(t.Context(), other); err != nil {
		t.Errorf("another session after a logout: %v", err)
	}
	clock.advance(time.Hour)
	refused("after expiry", other, "token has expired")

	tok, _ = login()
	clock.advance(time.Minute)
	st.Accounts["admin"].PasswordMtime = clock.t
	refused("after a password change", tok, "the password changed since this session started")

	st.Accounts["admin"].PasswordMtime = time.Time{}
	st.Accounts["admin"].Enabled = false
	refused("after disabling the account", tok, `account "admin" is disabled or does not exist`)
}

func TestVerifyAPIToken(t *testing.T) {
	st := testSettings(t)
	st.Accounts["bot"].Tokens = []TokenRecord{{ID: "tok-1", IssuedAt: 1}}
	a := New(Options{Settings: staticSettings{st}})
	tok, err := Sign(st.SecretKey, Claims{Issuer: Issuer, Subject: "bot:apiKey", IssuedAt: 1, ID: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Verify(t.Context(), tok)
	if err != nil || c.Username() != "bot" {
		t.Fatalf("Verify API token: %+v, %v", c, err)
	}
	st.Accounts["bot"].Tokens = nil
	if _, err := a.Verify(t.Context(), tok); err == nil {
		t.Error("an API token whose record was deleted still verifies")
	}
	forged, _ := Sign(st.SecretKey, Claims{Issuer: Issuer, Subject: "admin:apiKey", IssuedAt: 1, ID: "x"})
	if _, err := a.Verify(t.Context(), forged); err == nil {
		t.Error("an apiKey token of admin (no apiKey capability) verifies")
	}
}
