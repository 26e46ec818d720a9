package notify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// githubApp holds a GitHub App installation's access token, renewed a
// minute before it expires.
type githubApp struct {
	appID, installationID int64
	key                   *rsa.PrivateKey
	tokenURL              string
	client                *http.Client

	mu      sync.Mutex
	current string
	expires time.Time
}

func newGitHubApp(o githubOptions, base string, client *http.Client) (*githubApp, error) {
	appID, err := toInt64(o.AppID)
	if err != nil {
		return nil, fmt.Errorf("appID: %w", err)
	}
	inst, err := toInt64(o.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installationID: %w", err)
	}
	key, err := parseRSAKey(o.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("privateKey: %w", err)
	}
	return &githubApp{
		appID: appID, installationID: inst, key: key, client: client,
		tokenURL: fmt.Sprintf("%s/app/installations/%d/access_tokens", base, inst),
	}, nil
}

// toInt64 reads an ID written as a number or a string.
func toInt64(v any) (int64, error) {
	switch n := v.(type) {
	case float64:
		return int64(n), nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(n), 10, 64)
	case nil:
		return 0, errors.New("is required")
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

func parseRSAKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	return rk, nil
}

// token returns the installation's access token.
func (a *githubApp) token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current != "" && time.Until(a.expires) > time.Minute {
		return a.current, nil
	}
	jwt, err := a.jwt(time.Now())
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.tokenURL, nil)
	if err != nil {
		return "", fmt.Errorf("build request: %w", redactURLError(err))
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Authorization", "Bearer "+jwt)
	body, err := do(a.client, req)
	if err != nil {
		return "", fmt.Errorf("installation token: %w", err)
	}
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		return "", fmt.Errorf("installation token: unexpected answer")
	}
	a.current, a.expires = out.Token, out.ExpiresAt
	return a.current, nil
}

// jwt signs the app's JSON Web Token (RS256), valid for nine minutes
// from a minute ago, as GitHub asks.
func (a *githubApp) jwt(now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": strconv.FormatInt(a.appID, 10),
	})
	signed := header + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign the app's token: %w", err)
	}
	return signed + "." + enc.EncodeToString(sig), nil
}
