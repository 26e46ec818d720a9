// Package gitserver serves bare Git repositories over HTTP for tests, with
// git's own http-backend, on 127.0.0.1, optionally behind basic auth.
package gitserver

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// Server serves the bare repositories under a root folder: the repository
// root/NAME.git is URL/NAME.git. It counts fetches (upload-pack POSTs)
// and ref listings.
type Server struct {
	URL     string
	Fetches atomic.Int32
	Lists   atomic.Int32
}

// Serve starts a server that the test's cleanup stops; with user set,
// every request needs that user and pass.
func Serve(t testing.TB, root, user, pass string) *Server {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git CLI is needed to serve test repositories: %v", err)
	}
	backend := &cgi.Handler{
		Path: gitPath, Args: []string{"http-backend"},
		// Pushes are served too (http.receivepack), behind the same
		// basic auth as fetches.
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true"},
	}
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			s.Fetches.Add(1)
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			s.Lists.Add(1)
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}
