package scm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/scm"
	"github.com/wavecd/wavecd/internal/scm/scmtest"
)

// names are "repo@branch url" of repositories, sorted.
func names(repos []scm.Repository) []string {
	var out []string
	for _, r := range repos {
		out = append(out, r.Name+"@"+r.Branch+" "+r.URL)
	}
	slices.Sort(out)
	return out
}

// repositoryCase lists the shop organization's repositories with opts:
// their names, or an error.
type repositoryCase struct {
	opts    scm.RepositoryOptions
	want    []string
	wantErr string
}

// repositoryCases runs the cases against a service.
func repositoryCases(t *testing.T, svc interface {
	Repositories(ctx context.Context, owner string, o scm.RepositoryOptions) ([]scm.Repository, error)
}, tests map[string]repositoryCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repos, err := svc.Repositories(t.Context(), "shop", tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tc.want, names(repos)); diff != "" {
				t.Errorf("repositories (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGitHubRepositories lists an organization over two pages, each
// repository's default branch or all of them, without archived ones when
// asked, with the clone URL the protocol picks.
func TestGitHubRepositories(t *testing.T) {
	api := scmtest.ServeGitHub(t, "ghp_test")
	gh, err := scm.NewGitHub(scm.GitHubOptions{API: api.URL, Token: "ghp_test"})
	if err != nil {
		t.Fatal(err)
	}
	repositoryCases(t, gh, map[string]repositoryCase{
		"default branches over ssh": {want: []string{
			"cart@main git@github.com:shop/cart.git", "catalog@trunk git@github.com:shop/catalog.git", "legacy@master git@github.com:shop/legacy.git"}},
		"https, without archived": {opts: scm.RepositoryOptions{CloneProtocol: "https", ExcludeArchived: true}, want: []string{
			"cart@main https://github.com/shop/cart.git", "catalog@trunk https://github.com/shop/catalog.git"}},
		"all branches": {opts: scm.RepositoryOptions{AllBranches: true, ExcludeArchived: true}, want: []string{
			"cart@feature/coupons git@github.com:shop/cart.git", "cart@main git@github.com:shop/cart.git", "catalog@trunk git@github.com:shop/catalog.git"}},
		"a protocol GitHub does not have": {opts: scm.RepositoryOptions{CloneProtocol: "git"}, wantErr: "unknown clone protocol for GitHub git"},
	})
	repos, err := gh.Repositories(t.Context(), "shop", scm.RepositoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cart := repos[0]
	if cart.Organization != "shop" || cart.ID != 101 || cart.SHA != "6dcb09b5b57875f334f61aebed695e2e4193db5e" || strings.Join(cart.Labels, ",") != "team-checkout,deploy" {
		t.Errorf("cart: %+v", cart)
	}
	for path, want := range map[string]bool{"deploy": true, "deploy/": true, "deploy/legacy.txt": false} {
		if got, err := gh.PathExists(t.Context(), cart, path); err != nil || got != want {
			t.Errorf("path %s exists: %v (%v), want %v", path, got, err, want)
		}
	}
	if u := api.Unknown(); len(u) > 0 {
		t.Errorf("requests the replay does not know: %v", u)
	}
}

// TestGitHubPullRequests lists the open pull requests carrying every
// label asked for; a repository that is not there is
// ErrRepositoryNotFound; a bad token is refused.
func TestGitHubPullRequests(t *testing.T) {
	api := scmtest.ServeGitHub(t, "ghp_test")
	gh, err := scm.NewGitHub(scm.GitHubOptions{API: api.URL, Token: "ghp_test"})
	if err != nil {
		t.Fatal(err)
	}
	prs, err := gh.PullRequests(t.Context(), "shop", "cart", []string{"preview"})
	if err != nil {
		t.Fatal(err)
	}
	want := []scm.PullRequest{
		{Number: 42, Title: "Coupons at checkout", Branch: "feature/coupons", TargetBranch: "main", HeadSHA: "c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc", Author: "alice", Labels: []string{"preview", "team-checkout"}},
		{Number: 44, Title: "Release 2.0", Branch: "release/2.0", TargetBranch: "stable", HeadSHA: "e5c4b8f2c2fad4028b1f5a3e7d9cab8f6e4d2c1b", Author: "carol", Labels: []string{"preview"}},
	}
	if diff := gocmp.Diff(want, prs); diff != "" {
		t.Errorf("pull requests (-want +got):\n%s", diff)
	}
	if all, err := gh.PullRequests(t.Context(), "shop", "cart", nil); err != nil || len(all) != 3 {
		t.Errorf("without labels: %d pull requests (%v), want 3", len(all), err)
	}
	if _, err := gh.PullRequests(t.Context(), "shop", "gone", nil); !errors.Is(err, scm.ErrRepositoryNotFound) {
		t.Errorf("a repository that is not there: %v", err)
	}
	anonymous, err := scm.NewGitHub(scm.GitHubOptions{API: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anonymous.PullRequests(t.Context(), "shop", "cart", nil); err == nil || !strings.Contains(err.Error(), "401 Bad credentials") {
		t.Errorf("without the token: %v", err)
	}
}
