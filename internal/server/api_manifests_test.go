package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestAPIManifests(t *testing.T) {
	env := testenv.Get(t)
	h := newAPIHarness(t, harnessOptions{differ: compare.NewDiffer(env.Config, compare.DifferOptions{CacheDir: t.TempDir()})})
	repo := testenv.NewGitRepo(t, map[string]string{"web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {v: one}\n"})
	first := repo.Git("rev-parse", "HEAD")
	repo.Commit(map[string]string{"web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {v: two}\n"}, "two")
	second := repo.Git("rev-parse", "HEAD")
	h.apply(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web}
spec:
  project: default
  source: {repoURL: ` + repo.Dir + `, path: web, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
`)
	admin := h.admin()
	var m struct {
		Manifests            []string
		Revision, SourceType string
		Namespace, Server    string
	}
	r := h.do("GET", "/api/v1/applications/web/manifests", admin, nil)
	if h.decode(r, &m); len(m.Manifests) != 1 || !strings.Contains(m.Manifests[0], `"v":"two"`) || m.Revision != second || m.SourceType != "Directory" || m.Namespace != h.ns {
		t.Errorf("manifests: %d %s", r.status, r.body)
	}
	r = h.do("GET", "/api/v1/applications/web/manifests?revision="+first, admin, nil)
	if h.decode(r, &m); len(m.Manifests) != 1 || !strings.Contains(m.Manifests[0], `"v":"one"`) || m.Revision != first {
		t.Errorf("manifests at the first commit: %d %s", r.status, r.body)
	}
	r = h.do("GET", "/api/v1/applications/web/manifests?revision=no-such-branch", admin, nil)
	if h.wantError("manifests at a missing revision", r, http.StatusInternalServerError, 13); !strings.Contains(r.body, "no-such-branch") {
		t.Errorf("manifests at a missing revision: %s", r.body)
	}
	// bot has no role: it may not read the app.
	bot, err := (auth.Store{Client: h.kube, Namespace: h.ns}).IssueAPIToken(t.Context(), "bot", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h.wantError("bot reads manifests", h.do("GET", "/api/v1/applications/web/manifests", bot, nil), http.StatusForbidden, 7)

	// A server without a differ renders nothing, and says so.
	plain := newAPIHarness(t, harnessOptions{})
	plain.applyFixtures()
	plain.wantError("no differ", plain.do("GET", "/api/v1/applications/guestbook/manifests", plain.admin(), nil), http.StatusServiceUnavailable, 14)
}
