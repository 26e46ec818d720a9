package sso

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/settings"
)

// Keys of argocd-cm.
const (
	KeyOIDCConfig = "oidc.config"
	KeyURL        = "url"
)

// CallbackPath is where the provider sends the browser back.
const CallbackPath = "/auth/callback"

// DefaultScopes are requested when oidc.config names none, as in Argo CD.
var DefaultScopes = []string{"openid", "profile", "email", "groups"}

// Claim is one entry of requestedIDTokenClaims: an OpenID "claims"
// request parameter member.
type Claim struct {
	Essential bool     `json:"essential,omitempty"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// Config is oidc.config with its Secret references resolved, and the
// server's URL.
type Config struct {
	Name                     string            `json:"name,omitempty"`
	Issuer                   string            `json:"issuer"`
	ClientID                 string            `json:"clientID"`
	ClientSecret             string            `json:"clientSecret,omitempty"`
	CLIClientID              string            `json:"cliClientID,omitempty"`
	RequestedScopes          []string          `json:"requestedScopes,omitempty"`
	RequestedIDTokenClaims   map[string]*Claim `json:"requestedIDTokenClaims,omitempty"`
	LogoutURL                string            `json:"logoutURL,omitempty"`
	RootCA                   string            `json:"rootCA,omitempty"`
	EnablePKCEAuthentication bool              `json:"enablePKCEAuthentication,omitempty"`
	AllowedAudiences         []string          `json:"allowedAudiences,omitempty"`
	// SkipAudienceCheckWhenTokenHasNoAudience accepts a token without an
	// aud claim (default false, as in Argo CD).
	SkipAudienceCheckWhenTokenHasNoAudience *bool  `json:"skipAudienceCheckWhenTokenHasNoAudience,omitempty"`
	RefreshTokenThreshold                   string `json:"refreshTokenThreshold,omitempty"`

	// URL is argocd-cm's url: the server's external URL.
	URL string `json:"-"`
	// threshold is RefreshTokenThreshold parsed.
	threshold time.Duration
}

// SecretLookup reads a `$` reference's value.
type SecretLookup func(ctx context.Context, ref settings.SecretRef) (string, error)

// ParseConfig reads oidc.config and url from argocd-cm's data. No
// oidc.config is (nil, nil): SSO is off. An error names the key and the
// field at fault.
func ParseConfig(ctx context.Context, data map[string]string, lookup SecretLookup) (*Config, error) {
	raw := strings.TrimSpace(data[KeyOIDCConfig])
	if raw == "" {
		return nil, nil
	}
	var c Config
	if err := yaml.UnmarshalStrict([]byte(raw), &c); err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", KeyOIDCConfig, err)
	}
	c.URL = strings.TrimRight(strings.TrimSpace(data[KeyURL]), "/")
	fields := map[string]*string{
		"issuer": &c.Issuer, "clientID": &c.ClientID, "clientSecret": &c.ClientSecret,
		"cliClientID": &c.CLIClientID, "rootCA": &c.RootCA,
	}
	for field, v := range fields {
		resolved, err := resolve(ctx, *v, lookup)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %s: %w", KeyOIDCConfig, field, err)
		}
		*v = resolved
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", KeyOIDCConfig, err)
	}
	return &c, nil
}

func (c *Config) validate() error {
	switch {
	case c.Issuer == "":
		return errors.New("issuer is empty")
	case c.ClientID == "":
		return errors.New("clientID is empty")
	}
	if u, err := url.Parse(c.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("issuer %q is not an http(s) URL", c.Issuer)
	}
	if c.URL == "" {
		return fmt.Errorf("argocd-cm has no %s: sign-in needs the server's external URL to name its callback", KeyURL)
	}
	if u, err := url.Parse(c.URL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("argocd-cm %s %q is not an http(s) URL", KeyURL, c.URL)
	}
	if c.RefreshTokenThreshold != "" {
		d, err := time.ParseDuration(c.RefreshTokenThreshold)
		if err != nil || d < 0 {
			return fmt.Errorf("refreshTokenThreshold %q is not a duration", c.RefreshTokenThreshold)
		}
		c.threshold = d
	}
	return nil
}

// resolve reads a `$` reference (settings.SecretRef); any other value is
// itself.
func resolve(ctx context.Context, v string, lookup SecretLookup) (string, error) {
	ref, isRef, err := settings.ParseSecretRef(v)
	if !isRef {
		return v, nil
	}
	if err != nil {
		return "", err
	}
	if lookup == nil {
		return "", fmt.Errorf("%q references a Secret, and no Secrets can be read", v)
	}
	return lookup(ctx, ref)
}

// Scopes are the scopes requested at sign-in.
func (c *Config) Scopes() []string {
	if len(c.RequestedScopes) == 0 {
		return DefaultScopes
	}
	return c.RequestedScopes
}

// Audiences are the aud values a token may carry.
func (c *Config) Audiences() []string {
	if len(c.AllowedAudiences) > 0 {
		return c.AllowedAudiences
	}
	if c.CLIClientID != "" {
		return []string{c.ClientID, c.CLIClientID}
	}
	return []string{c.ClientID}
}

// RedirectURL is the callback the provider sends the browser back to.
func (c *Config) RedirectURL() string { return c.URL + CallbackPath }

// Threshold is how long before its expiry a session is refreshed; zero
// refreshes only an expired one.
func (c *Config) Threshold() time.Duration { return c.threshold }

// DisplayName is the provider's name on the login page.
func (c *Config) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return "SSO"
}
