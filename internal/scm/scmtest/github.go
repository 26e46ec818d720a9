// Package scmtest serves Git hosting service APIs for tests, on
// 127.0.0.1: GitHub's REST API replayed from the responses in github/,
// and a real Gitea server (ServeGitea).
package scmtest

import (
	"embed"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"sync"
	"testing"
)

//go:embed github
var githubFiles embed.FS

// route is one request's answer (github/routes.json).
type route struct {
	File   string `json:"file"`
	Status int    `json:"status"`
	Next   string `json:"next"`
}

// GitHub is a GitHub Enterprise API on loopback answering the requests
// of github/routes.json; any other request is a 404 the test sees in
// Unknown. Token, when set, is required as a bearer token.
type GitHub struct {
	URL   string
	Token string

	mu       sync.Mutex
	requests []string
	unknown  []string
}

// ServeGitHub starts the API until the test ends.
func ServeGitHub(t testing.TB, token string) *GitHub {
	t.Helper()
	raw, err := githubFiles.ReadFile("github/routes.json")
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]route{}
	if err := json.Unmarshal(raw, &routes); err != nil {
		t.Fatal(err)
	}
	g := &GitHub{Token: token}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.RequestURI()
		g.mu.Lock()
		g.requests = append(g.requests, key)
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message": "Bad credentials", "status": "401"}`))
			return
		}
		rt, ok := routes[key]
		if !ok {
			g.mu.Lock()
			g.unknown = append(g.unknown, key)
			g.mu.Unlock()
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message": "Not Found", "status": "404"}`))
			return
		}
		body, err := githubFiles.ReadFile(path.Join("github", rt.File))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if rt.Next != "" {
			w.Header().Set("Link", `<http://`+r.Host+rt.Next+`>; rel="next"`)
		}
		if rt.Status != 0 {
			w.WriteHeader(rt.Status)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// Requests are the requests served so far, "METHOD /path?query".
func (g *GitHub) Requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.requests...)
}

// Unknown are the requests no route answered.
func (g *GitHub) Unknown() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.unknown...)
}
