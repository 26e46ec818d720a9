package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestNormalizeRepoURL(t *testing.T) {
	const want = "github.com/acme/seed"
	tests := map[string]struct {
		url, want string
	}{
		"https":                       {"https://github.com/acme/seed", want},
		"https with .git":             {"https://github.com/acme/seed.git", want},
		"trailing slash":              {"https://github.com/acme/seed/", want},
		".git and trailing slash":     {"https://github.com/acme/seed.git/", want},
		"upper case":                  {"https://GitHub.com/Acme/Seed.git", want},
		"http":                        {"http://github.com/acme/seed", want},
		"user and token":              {"https://bot:s3cr3t@github.com/acme/seed.git", want},
		"port":                        {"https://github.com:443/acme/seed", want},
		"scp-like":                    {"git@github.com:acme/seed.git", want},
		"scp-like without user":       {"github.com:acme/seed", want},
		"ssh scheme":                  {"ssh://git@github.com/acme/seed.git", want},
		"ssh scheme with port":        {"ssh://git@github.com:22/acme/seed", want},
		"no scheme":                   {"github.com/acme/seed", want},
		"surrounding space":           {"  https://github.com/acme/seed.git ", want},
		"other repo stays distinct":   {"https://github.com/acme/seed-two", "github.com/acme/seed-two"},
		"nested group":                {"https://gitlab.com/acme/platform/seed.git", "gitlab.com/acme/platform/seed"},
		"host differs from path case": {"git@GitLab.example.com:Team/App", "gitlab.example.com/team/app"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := NormalizeRepoURL(tc.url); got != tc.want {
				t.Errorf("NormalizeRepoURL(%q) = %q, want %q", tc.url, got, tc.want)
			}
		})
	}
}

func TestSameRepo(t *testing.T) {
	pushed := map[string]bool{"github.com/acme/seed": true}
	tests := map[string]struct {
		appURL string
		want   bool
	}{
		"same repo":                {"git@github.com:acme/seed.git", true},
		"ssh. host prefix":         {"ssh://git@ssh.github.com:443/acme/seed.git", true},
		"altssh. host prefix":      {"git@altssh.github.com:acme/seed", true},
		"other host":               {"https://gitlab.com/acme/seed", false},
		"repo with the same start": {"https://github.com/acme/seed-two", false},
		"parent path":              {"https://github.com/acme", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := sameRepo(tc.appURL, pushed); got != tc.want {
				t.Errorf("sameRepo(%q) = %v, want %v", tc.appURL, got, tc.want)
			}
		})
	}
}

func TestRevisionMatches(t *testing.T) {
	tests := map[string]struct {
		target, pushedRef string
		defaultBranch     string
		want              bool
	}{
		"branch name":                    {"main", "refs/heads/main", "main", true},
		"HEAD follows the default":       {"HEAD", "refs/heads/main", "main", true},
		"empty follows the default":      {"", "refs/heads/main", "main", true},
		"HEAD ignores other branches":    {"HEAD", "refs/heads/dev", "main", false},
		"full branch ref":                {"refs/heads/main", "refs/heads/main", "main", true},
		"other branch":                   {"dev", "refs/heads/main", "main", false},
		"branch with a slash":            {"feature/x", "refs/heads/feature/x", "main", true},
		"full ref of a slashed branch":   {"refs/heads/feature/x", "refs/heads/feature/x", "main", true},
		"tag":                            {"v1.0.0", "refs/tags/v1.0.0", "main", true},
		"full tag ref":                   {"refs/tags/v1.0.0", "refs/tags/v1.0.0", "main", true},
		"commit SHA never matches":       {"1a2b3c4d5e6f", "refs/heads/main", "main", false},
		"branch is not a prefix match":   {"mai", "refs/heads/main", "main", false},
		"case matters for branches":      {"Main", "refs/heads/main", "main", false},
		"default branch other than main": {"HEAD", "refs/heads/trunk", "trunk", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rev := parseRevision(tc.pushedRef)
			if got := revisionMatches(tc.target, rev, tc.defaultBranch == rev); got != tc.want {
				t.Errorf("revisionMatches(%q, push %q) = %v, want %v", tc.target, tc.pushedRef, got, tc.want)
			}
		})
	}
}

func TestRefreshPaths(t *testing.T) {
	app := func(annotation string, paths ...string) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ManifestGeneratePathsAnnotation: annotation}}}
		for _, p := range paths {
			a.Spec.Sources = append(a.Spec.Sources, v1alpha1.ApplicationSource{Path: p})
		}
		return a
	}
	tests := map[string]struct {
		app  *v1alpha1.Application
		want []string
	}{
		"no annotation":          {&v1alpha1.Application{}, nil},
		"dot is the source path": {app(".", "apps/a"), []string{"apps/a"}},
		"relative to each source": {app("../shared;.", "apps/a", "apps/b"),
			[]string{"apps/shared", "apps/shared", "apps/a", "apps/b"}},
		"absolute from the root": {app("/charts/common", "apps/a"), []string{"charts/common"}},
		"empty items skipped":    {app(";;.", "apps/a"), []string{"apps/a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, refreshPaths(tc.app)); diff != "" {
				t.Errorf("refreshPaths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilesChanged(t *testing.T) {
	tests := map[string]struct {
		paths, changed []string
		want           bool
	}{
		"no refresh paths":          {nil, []string{"x"}, true},
		"no file list":              {[]string{"apps/a"}, nil, true},
		"file under the path":       {[]string{"apps/a"}, []string{"apps/a/deploy.yaml"}, true},
		"the path itself":           {[]string{"apps/a/values.yaml"}, []string{"apps/a/values.yaml"}, true},
		"sibling with a prefix":     {[]string{"apps/a"}, []string{"apps/ab/deploy.yaml"}, false},
		"other folder":              {[]string{"apps/a"}, []string{"apps/b/deploy.yaml", "README.md"}, false},
		"glob":                      {[]string{"apps/*/values.yaml"}, []string{"apps/b/values.yaml"}, true},
		"repository root":           {[]string{"."}, []string{"anything"}, true},
		"one of several paths hits": {[]string{"apps/a", "charts"}, []string{"charts/x/Chart.yaml"}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := filesChanged(tc.paths, tc.changed); got != tc.want {
				t.Errorf("filesChanged(%v, %v) = %v, want %v", tc.paths, tc.changed, got, tc.want)
			}
		})
	}
}
