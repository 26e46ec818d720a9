package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	good := Claims{Issuer: Issuer, Subject: "admin:login", IssuedAt: now.Unix(), NotBefore: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), ID: "j1"}
	sign := func(c Claims, k []byte) string {
		tok, err := Sign(k, c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	with := func(f func(*Claims)) Claims { c := good; f(&c); return c }
	tok := sign(good, key)
	parts := strings.Split(tok, ".")
	tests := map[string]struct {
		token   string
		at      time.Time
		wantErr string
	}{
		"valid":                    {token: tok, at: now},
		"valid until just before":  {token: tok, at: now.Add(time.Hour - time.Second)},
		"expired at exp":           {token: tok, at: now.Add(time.Hour), wantErr: "token has expired"},
		"not valid yet":            {token: tok, at: now.Add(-time.Minute), wantErr: "token not valid yet"},
		"small clock skew is fine": {token: tok, at: now.Add(-2 * time.Second)},
		"other key":                {token: sign(good, []byte("another key")), at: now, wantErr: "bad signature"},
		"claims changed": {
			token: parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"argocd","sub":"alice:login","jti":"j1","iat":1}`)) + "." + parts[2],
			at:    now, wantErr: "bad signature",
		},
		"alg none": {
			token: base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".",
			at:    now, wantErr: "unsupported token header",
		},
		"garbage":          {token: "abc", at: now, wantErr: "malformed token"},
		"other issuer":     {token: sign(with(func(c *Claims) { c.Issuer = "dex" }), key), at: now, wantErr: "unknown issuer"},
		"no jti":           {token: sign(with(func(c *Claims) { c.ID = "" }), key), at: now, wantErr: "token lacks sub or jti"},
		"no expiry is ok":  {token: sign(with(func(c *Claims) { c.ExpiresAt = 0 }), key), at: now.Add(1000 * time.Hour)},
		"empty signature":  {token: parts[0] + "." + parts[1] + ".", at: now, wantErr: "bad signature"},
		"truncated tokens": {token: parts[0] + "." + parts[1], at: now, wantErr: "malformed token"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Verify(key, tc.token, tc.at)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if c.Username() != "admin" || c.Capability() != CapabilityLogin {
					t.Errorf("claims %+v: username %q capability %q", c, c.Username(), c.Capability())
				}
				return
			}
			var ite *InvalidTokenError
			if !errors.As(err, &ite) || ite.Reason != tc.wantErr {
				t.Fatalf("error = %v, want invalid token %q", err, tc.wantErr)
			}
		})
	}
}

func TestSignRefusesEmptyKey(t *testing.T) {
	if _, err := Sign(nil, Claims{}); err == nil {
		t.Fatal("Sign with an empty key succeeded")
	}
	if _, err := Verify(nil, "a.b.c", time.Now()); err == nil {
		t.Fatal("Verify with an empty key succeeded")
	}
}
