package appset

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/scm/scmtest"
)

// TestGiteaGenerators runs the SCM provider and pull request generators
// of testdata/scm/gitea-*.yaml against a real Gitea server (Argo CD's
// gitea provider fields, a token from a Secret) and compares with
// want-gitea-*.yaml, whose SHA(<repository>@<branch>) and API_URL stand for
// that server's commits and URL.
func TestGiteaGenerators(t *testing.T) {
	srv := scmtest.ServeGitea(t)
	shop := srv.SeedShop(t)
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "gitea-token", "namespace": "argocd"},
		"stringData": map[string]any{"token": srv.Token},
	}}
	tests := map[string]struct {
		desc        string
		wantRequeue time.Duration
	}{
		"gitea-scm": {"all branches over https, a repository filter and a path-and-branch filter", 5 * time.Minute},
		"gitea-pr":  {"pull requests labelled preview, slugs and the author", DefaultSCMRequeue},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := scmSet(t, name+".yaml", srv.URL)
			got, err := Generate(context.Background(), set, Inputs{Objects: StaticObjects{secret}})
			if err != nil {
				t.Fatalf("%s: %v", tc.desc, err)
			}
			want := readApps(t, giteaWant(t, "want-"+name+".yaml", srv.URL, shop))
			if diff := gocmp.Diff(want, got.Apps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: apps (-want +got):\n%s", tc.desc, diff)
			}
			if got.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tc.wantRequeue)
			}
		})
	}
	t.Run("errors", func(t *testing.T) { testGiteaGeneratorErrors(t, srv, secret) })
}

func testGiteaGeneratorErrors(t *testing.T, srv *scmtest.Gitea, secret *unstructured.Unstructured) {
	scmErrorCases(t, srv.URL, StaticObjects{secret}, map[string]scmErrorCase{
		"a Secret that is not there": {file: "gitea-pr.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.PullRequest.Gitea.TokenRef.SecretName = "nope"
		}, wantErr: "failed to select pull request service provider: error fetching Gitea token: error fetching secret argocd/nope"},
		"a repository that is not there": {file: "gitea-pr.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.PullRequest.Gitea.Repo = "gone"
		}, wantErr: "error listing repos: error listing pull requests for shop/gone: repository not found"},
		"an api not allowed": {file: "gitea-scm.yaml", policy: SCMPolicy{Allowed: []string{"https://gitea.example.com"}},
			wantErr: `scm provider: scm provider not allowed: scm provider "` + srv.URL + `" not allowed`},
		"an owner that is not there": {file: "gitea-scm.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.SCMProvider.Gitea.Owner = "nobody"
		}, wantErr: "error listing repos of nobody"},
	})
}

// shaRef is SHA(repository@branch) or SHA7(...) in a want file.
var shaRef = regexp.MustCompile(`SHA(7?)\(([a-z0-9.-]+@[^)]+)\)`)

// giteaWant writes testdata/scm/name with the server's URL and commits
// in place of API_URL and SHA(...), and returns the copy's path.
func giteaWant(t *testing.T, name, url string, shop *scmtest.Shop) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "scm", name))
	if err != nil {
		t.Fatal(err)
	}
	text := shaRef.ReplaceAllStringFunc(string(raw), func(m string) string {
		sub := shaRef.FindStringSubmatch(m)
		sha, ok := shop.SHA[sub[2]]
		if !ok {
			t.Fatalf("%s: no commit for %s", name, sub[2])
		}
		if sub[1] == "7" {
			return sha[:7]
		}
		return sha
	})
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "API_URL", url)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
