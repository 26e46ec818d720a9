package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	r := newTestRepo(t)
	git := serveGit(t, filepath.Dir(r.bare), "git-user", "git-Pass-123")
	helm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "chart-user" || p != "chart-Pass-456" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if req.URL.Path != "/charts/index.yaml" {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte("apiVersion: v1\nentries: {}\n"))
	}))
	t.Cleanup(helm.Close)
	repoURL := git.URL + "/repo.git"
	cases := map[string]struct {
		cred    RepoCredential
		wantErr string
	}{
		"git with its credentials":   {cred: RepoCredential{URL: repoURL, Username: "git-user", Password: "git-Pass-123"}},
		"git with a wrong password":  {cred: RepoCredential{URL: repoURL, Username: "git-user", Password: "wrong-Secret-789"}, wantErr: "authentication required"},
		"git, no such repository":    {cred: RepoCredential{URL: git.URL + "/nope.git", Username: "git-user", Password: "git-Pass-123"}, wantErr: "not found"},
		"git, nothing listening":     {cred: RepoCredential{URL: "http://127.0.0.1:1/repo.git"}, wantErr: "connection refused"},
		"helm with its credentials":  {cred: RepoCredential{URL: helm.URL + "/charts", Type: "helm", Username: "chart-user", Password: "chart-Pass-456"}},
		"helm with a wrong password": {cred: RepoCredential{URL: helm.URL + "/charts", Type: "helm", Username: "chart-user", Password: "wrong-Secret-789"}, wantErr: "401"},
		"oci":                        {cred: RepoCredential{URL: "oci://registry.example/charts", Type: "oci"}, wantErr: ErrProbeUnsupported.Error()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Probe(context.Background(), tc.cred, ProbeOptions{})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "wrong-Secret-789") || strings.Contains(err.Error(), "Pass-") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
	if err := Probe(context.Background(), RepoCredential{URL: "oci://x"}, ProbeOptions{}); !errors.Is(err, ErrProbeUnsupported) {
		t.Errorf("an oci:// URL: %v", err)
	}
}
