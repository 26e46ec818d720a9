package appset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/scm/scmtest"
)

// scmObjects are testdata/scm/objects.yaml: the token Secret.
func scmObjects(t *testing.T) StaticObjects {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "scm", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &o.Object); err != nil {
		t.Fatal(err)
	}
	return StaticObjects{o}
}

// scmSet reads an ApplicationSet of testdata/scm naming api.
func scmSet(t *testing.T, name, api string) *v1alpha1.ApplicationSet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "scm", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(raw), "API_URL", api)), 0o600); err != nil {
		t.Fatal(err)
	}
	return readAppSet(t, path)
}

// TestSCMGenerators runs the SCM provider and pull request generators of
// testdata/scm against GitHub's API replayed on loopback
// (scmtest.ServeGitHub: responses in GitHub's shape, not recorded live),
// with goTemplate and fasttemplate, and compares with want-*.yaml.
func TestSCMGenerators(t *testing.T) {
	tests := map[string]struct {
		desc        string
		wantRequeue time.Duration
	}{
		"scm-gotemplate":   {"all branches, a repository filter and a path-and-branch filter ANDed, values", DefaultSCMRequeue},
		"scm-fasttemplate": {"default branches over SSH, labelMatch with pathsDoNotExist", 10 * time.Minute},
		"pr-gotemplate":    {"labels asked of GitHub, filters ORed, labels as a list", DefaultSCMRequeue},
		"pr-fasttemplate":  {"a branch filter, slugs of branch names", DefaultSCMRequeue},
	}
	api := scmtest.ServeGitHub(t, "ghp_test")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := scmSet(t, name+".yaml", api.URL)
			got, err := Generate(context.Background(), set, Inputs{Objects: scmObjects(t)})
			if err != nil {
				t.Fatalf("%s: %v", tc.desc, err)
			}
			if os.Getenv("WAVECD_PRINT") != "" {
				out, _ := yaml.Marshal(got.Apps)
				t.Logf("%s", out)
			}
			want := readApps(t, filepath.Join("testdata", "scm", "want-"+name+".yaml"))
			if diff := gocmp.Diff(want, got.Apps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: apps (-want +got):\n%s", tc.desc, diff)
			}
			if got.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tc.wantRequeue)
			}
		})
	}
	if u := api.Unknown(); len(u) > 0 {
		t.Errorf("requests the replay does not know: %v", u)
	}
}

// scmErrorCase is a generation of an ApplicationSet of testdata/scm,
// changed and under a policy, that fails with wantErr.
type scmErrorCase struct {
	file    string
	change  func(*v1alpha1.ApplicationSetGenerator)
	policy  SCMPolicy
	wantErr string
}

// scmErrorCases runs the cases against the service at api, with objects.
func scmErrorCases(t *testing.T, api string, objects StaticObjects, tests map[string]scmErrorCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := scmSet(t, tc.file, api)
			if tc.change != nil {
				tc.change(&set.Spec.Generators[0])
			}
			got, err := Generate(context.Background(), set, Inputs{Objects: objects, SCM: tc.policy})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "generators[0].") {
				t.Fatalf("error = %v, want one naming generators[0] and containing %q", err, tc.wantErr)
			}
			if got != nil {
				t.Errorf("a failed generation returned %d apps", len(got.Apps))
			}
		})
	}
}

// TestSCMGeneratorErrors: each failure names the generator and its cause,
// and generates nothing.
func TestSCMGeneratorErrors(t *testing.T) {
	api := scmtest.ServeGitHub(t, "ghp_test")
	scmErrorCases(t, api.URL, scmObjects(t), map[string]scmErrorCase{
		"a key the Secret lacks": {file: "pr-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.PullRequest.Github.TokenRef.Key = "tok"
		}, wantErr: `failed to select pull request service provider: error fetching Github token: key "tok" in secret argocd/github-token not found`},
		"no token": {file: "scm-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.SCMProvider.Github.TokenRef = nil
		}, wantErr: "error listing repos: GET " + api.URL + "/api/v3/orgs/shop/repos?per_page=100: 401 Bad credentials"},
		"a repository that is not there": {file: "pr-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.PullRequest.Github.Repo = "gone"
		}, wantErr: "error listing repos: error listing pull requests for shop/gone: repository not found"},
		"providers disabled": {file: "scm-fasttemplate.yaml", policy: SCMPolicy{Disabled: true}, wantErr: "scm providers are disabled"},
		"an api not allowed": {file: "pr-fasttemplate.yaml", policy: SCMPolicy{Allowed: []string{"https://ghe.example.com"}},
			wantErr: `failed to select pull request service provider: scm provider not allowed: scm provider "` + api.URL + `" not allowed, must use one of the following: https://ghe.example.com`},
		"a bad pattern": {file: "scm-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			bad := "(deploy"
			g.SCMProvider.Filters[0].LabelMatch = &bad
		}, wantErr: `error compiling LabelMatch regexp "(deploy"`},
		"a GitHub App": {file: "pr-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.PullRequest.Github.AppSecretName = "github-app"
		}, wantErr: `appSecretName "github-app": GitHub App credentials are not supported by wavecd; use tokenRef`},
		"gitlab": {file: "scm-fasttemplate.yaml", change: func(g *v1alpha1.ApplicationSetGenerator) {
			g.SCMProvider.Github, g.SCMProvider.Gitlab = nil, &apiextensionsv1.JSON{Raw: []byte(`{"group":"shop"}`)}
		}, wantErr: "the scmProvider generator's gitlab provider is not supported by wavecd (supported: gitea, github)"},
	})
	set := scmSet(t, "pr-fasttemplate.yaml", api.URL)
	set.Spec.Generators[0].PullRequest.Github.Repo = "gone"
	set.Spec.Generators[0].PullRequest.ContinueOnRepoNotFoundError = true
	got, err := Generate(context.Background(), set, Inputs{Objects: scmObjects(t)})
	if err != nil || len(got.Apps) != 0 {
		t.Errorf("continueOnRepoNotFoundError: %v, %v; want no apps and no error", got, err)
	}
}

// TestBranchSlug makes branch names into Argo CD's branch_slug.
func TestBranchSlug(t *testing.T) {
	for branch, want := range map[string]string{
		"feature/coupons":    "feature-coupons",
		"wip/Basket_Rework":  "wip-basket-rework",
		"fix: Ümlaut & more": "fix-umlaut-and-more",
		"release/2.0":        "release-2-0",
		"a-very-long-branch-name-that-goes-on-and-on-past-fifty-characters": "a-very-long-branch-name-that-goes-on-and-on-past",
		strings.Repeat("x", 60): strings.Repeat("x", 50),
	} {
		if got := branchSlug(branch); got != want {
			t.Errorf("branchSlug(%q) = %q, want %q", branch, got, want)
		}
	}
}
