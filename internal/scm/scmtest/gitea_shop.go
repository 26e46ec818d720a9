package scmtest

import (
	"encoding/base64"
	"fmt"
	"testing"

	"code.gitea.io/sdk/gitea"
)

// Shop is what SeedShop made: the organization "shop" on a Gitea server.
//
//   - cart (default branch main; labels deploy, preview and team-checkout; a file
//     deploy/app.yaml) with branches feature/coupons and fix/typo, and
//     open pull requests from both to main: #1 "Coupons at checkout"
//     (labels preview, team-checkout) and #2 "Fix a typo" (none);
//   - catalog (default branch trunk) with branch release/2.0 and its open
//     pull request #1 "Release 2.0" to trunk (label preview);
//   - legacy (default branch master), archived;
//   - empty, with no commit.
type Shop struct {
	// SHA is the head commit of each "repository@branch".
	SHA map[string]string
	// ID is each repository's id.
	ID map[string]int64
}

// ShopOrg is the organization SeedShop makes.
const ShopOrg = "shop"

// SeedShop makes the organization Shop describes, as the admin.
func (g *Gitea) SeedShop(t testing.TB) *Shop {
	t.Helper()
	c := g.Client
	must := func(what string, _ any, _ *gitea.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("gitea: %s: %v", what, err)
		}
	}
	org, resp, err := c.CreateOrg(gitea.CreateOrgOption{Name: ShopOrg, Visibility: gitea.VisibleTypePublic})
	must("create org", org, resp, err)
	s := &Shop{SHA: map[string]string{}, ID: map[string]int64{}}
	repo := func(name, branch string, init bool) {
		r, resp, err := c.CreateOrgRepo(ShopOrg, gitea.CreateRepoOption{Name: name, AutoInit: init, DefaultBranch: branch, Readme: readme(init)})
		must("create repo "+name, r, resp, err)
		s.ID[name] = r.ID
	}
	file := func(repo, base, branch, path string) {
		fr, resp, err := c.CreateFile(ShopOrg, repo, path, gitea.CreateFileOptions{
			FileOptions: gitea.FileOptions{Message: "add " + path, BranchName: base, NewBranchName: newBranch(base, branch)},
			Content:     base64.StdEncoding.EncodeToString([]byte("name: " + path + "\n")),
		})
		must(fmt.Sprintf("commit %s to %s@%s", path, repo, branch), fr, resp, err)
		s.SHA[repo+"@"+branch] = fr.Commit.SHA
	}
	label := func(repo, name string) int64 {
		l, resp, err := c.CreateLabel(ShopOrg, repo, gitea.CreateLabelOption{Name: name, Color: "#00aabb"})
		must("create label "+name, l, resp, err)
		return l.ID
	}
	pr := func(repo, head, base, title string, labels ...int64) {
		p, resp, err := c.CreatePullRequest(ShopOrg, repo, gitea.CreatePullRequestOption{Head: head, Base: base, Title: title, Labels: labels})
		must("open pull request "+title, p, resp, err)
	}
	repo("cart", "main", true)
	label("cart", "deploy")
	team, preview := label("cart", "team-checkout"), label("cart", "preview")
	file("cart", "main", "main", "deploy/app.yaml")
	file("cart", "main", "feature/coupons", "coupons.yaml")
	file("cart", "main", "fix/typo", "typo.yaml")
	pr("cart", "feature/coupons", "main", "Coupons at checkout", preview, team)
	pr("cart", "fix/typo", "main", "Fix a typo")
	repo("catalog", "trunk", true)
	file("catalog", "trunk", "release/2.0", "release.yaml")
	pr("catalog", "release/2.0", "trunk", "Release 2.0", label("catalog", "preview"))
	repo("legacy", "master", true)
	archived := true
	r, resp, err := c.EditRepo(ShopOrg, "legacy", gitea.EditRepoOption{Archived: &archived})
	must("archive legacy", r, resp, err)
	repo("empty", "main", false)
	return s
}

// newBranch is the branch a commit to branch from base makes: none when
// it is base itself.
func newBranch(base, branch string) string {
	if branch == base {
		return ""
	}
	return branch
}

// readme is Gitea's readme template for an initialised repository.
func readme(init bool) string {
	if init {
		return "Default"
	}
	return ""
}
