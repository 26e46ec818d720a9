package sso_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/sso"
)

func TestParseConfig(t *testing.T) {
	secrets := map[string]string{"argocd-secret/oidc.clientSecret": "s3", "okta/secret": "s4"}
	lookup := func(_ context.Context, ref settings.SecretRef) (string, error) {
		if v, ok := secrets[ref.Secret+"/"+ref.Key]; ok {
			return v, nil
		}
		return "", errors.New("secret " + ref.Secret + " has no key " + ref.Key)
	}
	base := "issuer: https://idp.example.test\nclientID: wavecd\n"
	cases := map[string]struct {
		data       map[string]string
		wantErr    string
		check      func(*sso.Config) bool
		wantScopes []string
	}{
		"none": {data: map[string]string{"url": "https://cd.example.test"}, check: func(c *sso.Config) bool { return c == nil }},
		"defaults": {data: map[string]string{"url": "https://cd.example.test/", "oidc.config": base}, check: func(c *sso.Config) bool {
			return c.RedirectURL() == "https://cd.example.test/auth/callback" && c.DisplayName() == "SSO" && len(c.Audiences()) == 1
		}, wantScopes: sso.DefaultScopes},
		"argocd-secret":  {data: map[string]string{"url": "https://cd", "oidc.config": base + "clientSecret: $oidc.clientSecret\n"}, check: func(c *sso.Config) bool { return c.ClientSecret == "s3" }},
		"another secret": {data: map[string]string{"url": "https://cd", "oidc.config": base + "clientSecret: $okta:secret\ncliClientID: cli\nrequestedScopes: [openid, groups]\n"}, check: func(c *sso.Config) bool { return c.ClientSecret == "s4" && len(c.Audiences()) == 2 }, wantScopes: []string{"openid", "groups"}},
		"missing secret": {data: map[string]string{"url": "https://cd", "oidc.config": base + "clientSecret: $okta:nope\n"}, wantErr: "clientSecret: secret okta has no key nope"},
		"bad reference":  {data: map[string]string{"url": "https://cd", "oidc.config": base + "clientSecret: $:x\n"}, wantErr: "not a reference"},
		"no url":         {data: map[string]string{"oidc.config": base}, wantErr: "argocd-cm has no url"},
		"no issuer":      {data: map[string]string{"url": "https://cd", "oidc.config": "clientID: x\n"}, wantErr: "issuer is empty"},
		"no client":      {data: map[string]string{"url": "https://cd", "oidc.config": "issuer: https://idp\n"}, wantErr: "clientID is empty"},
		"bad issuer":     {data: map[string]string{"url": "https://cd", "oidc.config": "issuer: idp.example\nclientID: x\n"}, wantErr: "not an http(s) URL"},
		"unknown field":  {data: map[string]string{"url": "https://cd", "oidc.config": base + "clientSecrte: x\n"}, wantErr: `unknown field "clientSecrte"`},
		"bad threshold":  {data: map[string]string{"url": "https://cd", "oidc.config": base + "refreshTokenThreshold: soon\n"}, wantErr: "refreshTokenThreshold"},
		"not yaml":       {data: map[string]string{"url": "https://cd", "oidc.config": "[x"}, wantErr: "oidc.config"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := sso.ParseConfig(context.Background(), tc.data, lookup)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil && !tc.check(c) {
				t.Errorf("config %+v", c)
			}
			if tc.wantScopes != nil && strings.Join(c.Scopes(), ",") != strings.Join(tc.wantScopes, ",") {
				t.Errorf("scopes %v", c.Scopes())
			}
		})
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		base, target string
		want         bool
	}{
		{"https://cd.example", "https://cd.example/applications", true},
		{"https://cd.example", "https://cd.example", true},
		{"https://cd.example/argo", "https://cd.example/argo/applications", true},
		{"https://cd.example/argo", "https://cd.example/argo", true},
		{"https://cd.example/argo", "https://cd.example/argonaut", false},
		{"https://cd.example/argo", "https://cd.example/argo/../admin", false},
		{"https://cd.example", "http://cd.example/", false},
		{"https://cd.example", "https://cd.example:8443/", false},
		{"https://cd.example", "https://evil.example/", false},
		{"https://cd.example", "https://cd.example@evil.example/", false},
		{"https://cd.example", "https://user@cd.example/", false},
		{"https://cd.example", "/applications", false},
		{"https://cd.example", "https://cd.example/a%0d%0aSet-Cookie:x", false},
	}
	for _, tc := range cases {
		if got := sso.Within(tc.base, tc.target); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.base, tc.target, got, tc.want)
		}
	}
}
