package idp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// authRequestField finds the login form's hidden auth request id.
var authRequestField = regexp.MustCompile(`name="id" value="([^"]+)"`)

// SignIn plays a browser at the provider: it opens authURL (the
// provider's authorization request), fills in the login form and returns
// the URL the provider sends the browser back to (the client's redirect
// URI with code and state) without opening it.
func (p *Provider) SignIn(ctx context.Context, authURL, username, password string) (*url.URL, error) {
	return SignIn(ctx, p.Issuer, authURL, username, password)
}

// SignIn is Provider.SignIn for a provider of another process, known by
// its issuer URL.
func SignIn(ctx context.Context, issuer, authURL, username, password string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next, method, form := authURL, http.MethodGet, url.Values(nil)
	for range 10 {
		u, err := url.Parse(next)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(u.String(), issuer+"/") {
			return u, nil
		}
		status, loc, body, err := send(ctx, hc, method, u, form)
		if err != nil {
			return nil, err
		}
		switch {
		case status >= 300 && status < 400:
			ref, err := u.Parse(loc)
			if err != nil {
				return nil, err
			}
			next, method, form = ref.String(), http.MethodGet, nil
		case status == http.StatusOK && u.Path == "/login/username" && method == http.MethodGet:
			m := authRequestField.FindStringSubmatch(body)
			if m == nil {
				return nil, errors.New("the login page has no auth request id")
			}
			next, method = issuer+"/login/username", http.MethodPost
			form = url.Values{"id": {m[1]}, "username": {username}, "password": {password}}
		case status == http.StatusOK && method == http.MethodPost:
			return nil, fmt.Errorf("login refused: %s", strings.TrimSpace(errorText(body)))
		default:
			return nil, fmt.Errorf("%s %s: %d %s", method, u, status, strings.TrimSpace(body))
		}
	}
	return nil, errors.New("too many redirects at the provider")
}

func send(ctx context.Context, hc *http.Client, method string, u *url.URL, form url.Values) (int, string, string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return 0, "", "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Location"), string(b), nil
}

var errorPara = regexp.MustCompile(`<p style="color:red[^>]*>([^<]*)</p>`)

func errorText(body string) string {
	if m := errorPara.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return body
}
