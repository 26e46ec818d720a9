package scm_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/scm"
	"github.com/wavecd/wavecd/internal/scm/scmtest"
)

// TestGitea lists a real Gitea organization's repositories (default
// branches or all, over more than one page; archived and empty ones;
// clone URLs by protocol), checks paths, and lists the open pull requests
// by label; a repository that is not there is ErrRepositoryNotFound, a
// bad token is refused, and lists longer than a page are read whole.
func TestGitea(t *testing.T) {
	srv := scmtest.ServeGitea(t)
	shop := srv.SeedShop(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	g, err := scm.NewGitea(t.Context(), scm.GiteaOptions{API: srv.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	ssh := func(repo string) string { return fmt.Sprintf("git@%s:shop/%s.git", strings.Split(host, ":")[0], repo) }
	web := func(repo string) string { return srv.URL + "/shop/" + repo }
	repositoryCases(t, g, map[string]repositoryCase{
		"default branches over ssh": {want: []string{
			"cart@main " + ssh("cart"), "catalog@trunk " + ssh("catalog"), "legacy@master " + ssh("legacy")}},
		"https, without archived": {opts: scm.RepositoryOptions{CloneProtocol: "https", ExcludeArchived: true}, want: []string{
			"cart@main " + web("cart"), "catalog@trunk " + web("catalog")}},
		"all branches": {opts: scm.RepositoryOptions{AllBranches: true, ExcludeArchived: true}, want: []string{
			"cart@feature/coupons " + ssh("cart"), "cart@fix/typo " + ssh("cart"), "cart@main " + ssh("cart"),
			"catalog@release/2.0 " + ssh("catalog"), "catalog@trunk " + ssh("catalog")}},
		"a protocol Gitea does not have": {opts: scm.RepositoryOptions{CloneProtocol: "git"}, wantErr: "unknown clone protocol for Gitea git"},
	})
	repos, err := g.Repositories(t.Context(), scmtest.ShopOrg, scm.RepositoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cart := repos[0]
	if cart.Organization != "shop" || cart.ID != shop.ID["cart"] || cart.SHA != shop.SHA["cart@main"] ||
		strings.Join(cart.Labels, ",") != "deploy,preview,team-checkout" {
		t.Errorf("cart: %+v, want id %d, sha %s", cart, shop.ID["cart"], shop.SHA["cart@main"])
	}
	for path, want := range map[string]bool{"deploy": true, "deploy/": true, "deploy/app.yaml": true, "deploy/legacy.txt": false} {
		if got, err := g.PathExists(t.Context(), cart, path); err != nil || got != want {
			t.Errorf("path %s exists: %v (%v), want %v", path, got, err, want)
		}
	}
	testGiteaPullRequests(t, srv, g, shop)
	testGiteaPages(t, srv, g)
}

func testGiteaPullRequests(t *testing.T, srv *scmtest.Gitea, g *scm.Gitea, shop *scmtest.Shop) {
	prs, err := g.PullRequests(t.Context(), scmtest.ShopOrg, "cart", []string{"preview"})
	if err != nil {
		t.Fatal(err)
	}
	want := []scm.PullRequest{{Number: 1, Title: "Coupons at checkout", Branch: "feature/coupons", TargetBranch: "main",
		HeadSHA: shop.SHA["cart@feature/coupons"], Author: srv.Admin, Labels: []string{"preview", "team-checkout"}}}
	if diff := gocmp.Diff(want, prs); diff != "" {
		t.Errorf("pull requests (-want +got):\n%s", diff)
	}
	if all, err := g.PullRequests(t.Context(), scmtest.ShopOrg, "cart", nil); err != nil || len(all) != 2 {
		t.Errorf("without labels: %d pull requests (%v), want 2", len(all), err)
	}
	if _, err := g.PullRequests(t.Context(), scmtest.ShopOrg, "gone", nil); !errors.Is(err, scm.ErrRepositoryNotFound) {
		t.Errorf("a repository that is not there: %v", err)
	}
	bad, err := scm.NewGitea(t.Context(), scm.GiteaOptions{API: srv.URL, Token: "not-a-token"})
	if err == nil {
		_, err = bad.PullRequests(t.Context(), scmtest.ShopOrg, "cart", nil)
	}
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("with a bad token: %v", err)
	}
}

// testGiteaPages: lists longer than a page are read to their end (the
// labels of a repository: every list is read by the same code).
func testGiteaPages(t *testing.T, srv *scmtest.Gitea, g *scm.Gitea) {
	const extra = 55
	for i := range extra {
		_, _, err := srv.Client.CreateLabel(scmtest.ShopOrg, "catalog", gitea.CreateLabelOption{
			Name: fmt.Sprintf("batch-%02d", i), Color: "#00aabb"})
		if err != nil {
			t.Fatal(err)
		}
	}
	repos, err := g.Repositories(t.Context(), scmtest.ShopOrg, scm.RepositoryOptions{ExcludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range repos {
		if r.Name == "catalog" && len(r.Labels) != extra+1 {
			t.Errorf("catalog's labels: %d, want %d", len(r.Labels), extra+1)
		}
	}
}

// TestGiteaTLS: a Gitea server speaking HTTPS with a certificate no
// authority signed is refused, naming the certificate, unless the
// generator's insecure: true skips the check.
func TestGiteaTLS(t *testing.T) {
	srv := scmtest.ServeGiteaTLS(t)
	srv.SeedShop(t)
	_, err := scm.NewGitea(t.Context(), scm.GiteaOptions{API: srv.URL, Token: srv.Token})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a server with an unknown certificate: %v, want a certificate error", err)
	}
	g, err := scm.NewGitea(t.Context(), scm.GiteaOptions{API: srv.URL, Token: srv.Token, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	repos, err := g.Repositories(t.Context(), scmtest.ShopOrg, scm.RepositoryOptions{ExcludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range repos {
		got = append(got, r.Name+"@"+r.Branch)
	}
	if strings.Join(got, " ") != "cart@main catalog@trunk" {
		t.Errorf("repositories over HTTPS: %v", got)
	}
}
