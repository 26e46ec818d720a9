package scm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// giteaPageSize is how many entries one page of a Gitea list asks for
// (Gitea's default MAX_RESPONSE_ITEMS is 50).
const giteaPageSize = 50

// Gitea is a Gitea server's API, through Gitea's own client library.
type Gitea struct {
	client *gitea.Client
}

// GiteaOptions say how a Gitea server is reached.
type GiteaOptions struct {
	// API is the server's URL ("https://gitea.example.com").
	API string
	// Token authenticates (an access token); empty is anonymous.
	Token string
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// HTTPClient defaults to one like http.DefaultClient; its transport is
	// cloned when Insecure is set.
	HTTPClient *http.Client
}

// NewGitea returns a client of the Gitea server at o.API, whose calls
// end with ctx. It asks the server its version, as Gitea's library does
// to pick the API it speaks.
func NewGitea(ctx context.Context, o GiteaOptions) (*Gitea, error) {
	api := strings.TrimSpace(o.API)
	if api == "" {
		return nil, errors.New("gitea: api is required (the server's URL)")
	}
	hc := &http.Client{}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		hc = &c
	}
	if o.Insecure {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if t, ok := hc.Transport.(*http.Transport); ok {
			tr = t.Clone()
		}
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the generator's insecure: true asks for it
		hc.Transport = tr
	}
	opts := []gitea.ClientOption{gitea.SetHTTPClient(hc), gitea.SetContext(ctx)}
	if o.Token != "" {
		opts = append(opts, gitea.SetToken(o.Token))
	}
	c, err := gitea.NewClient(api, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitea api %q: %w", api, err)
	}
	return &Gitea{client: c}, nil
}

// Repositories lists the repositories of the organization (or user)
// owner, one entry per branch listed (the default branch unless
// AllBranches). Labels are each repository's issue labels, as Argo CD's
// Gitea provider has them. An empty repository yields nothing.
func (g *Gitea) Repositories(_ context.Context, owner string, o RepositoryOptions) ([]Repository, error) {
	repos, err := giteaPages(func(p gitea.ListOptions) ([]*gitea.Repository, *gitea.Response, error) {
		return g.client.ListOrgRepos(owner, gitea.ListOrgReposOptions{ListOptions: p})
	})
	if err != nil {
		return nil, fmt.Errorf("error listing repos of %s: %w", owner, err)
	}
	var out []Repository
	for _, repo := range repos {
		if o.ExcludeArchived && repo.Archived || repo.Empty {
			continue
		}
		base, err := g.repository(owner, repo, o.CloneProtocol)
		if err != nil {
			return nil, err
		}
		branches, err := g.branches(owner, repo, o.AllBranches)
		if err != nil {
			return nil, fmt.Errorf("error listing branches for %s/%s: %w", owner, repo.Name, err)
		}
		for _, b := range branches {
			r := base
			r.Branch = b.Name
			if b.Commit != nil {
				r.SHA = b.Commit.ID
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// repository is a Gitea repository's entry, before its branches.
func (g *Gitea) repository(owner string, repo *gitea.Repository, protocol string) (Repository, error) {
	var url string
	switch protocol {
	case "", "ssh":
		url = repo.SSHURL
	case "https":
		url = repo.HTMLURL
	default:
		return Repository{}, fmt.Errorf("unknown clone protocol for Gitea %v", protocol)
	}
	labels, err := giteaPages(func(p gitea.ListOptions) ([]*gitea.Label, *gitea.Response, error) {
		return g.client.ListRepoLabels(owner, repo.Name, gitea.ListLabelsOptions{ListOptions: p})
	})
	if err != nil {
		return Repository{}, fmt.Errorf("error listing labels for %s/%s: %w", owner, repo.Name, err)
	}
	names := make([]string, 0, len(labels))
	for _, l := range labels {
		names = append(names, l.Name)
	}
	return Repository{Organization: owner, Name: repo.Name, URL: url, Labels: names, ID: repo.ID, Archived: repo.Archived}, nil
}

// branches are the repository's default branch, or all of them.
func (g *Gitea) branches(owner string, repo *gitea.Repository, all bool) ([]*gitea.Branch, error) {
	if all {
		return giteaPages(func(p gitea.ListOptions) ([]*gitea.Branch, *gitea.Response, error) {
			return g.client.ListRepoBranches(owner, repo.Name, gitea.ListRepoBranchesOptions{ListOptions: p})
		})
	}
	b, resp, err := g.client.GetRepoBranch(owner, repo.Name, repo.DefaultBranch)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, nil // no commit yet
	}
	if err != nil {
		return nil, err
	}
	return []*gitea.Branch{b}, nil
}

// PathExists reports whether path (a file or a folder) exists on the
// repository's branch.
func (g *Gitea) PathExists(_ context.Context, repo Repository, path string) (bool, error) {
	path = strings.TrimSuffix(path, "/")
	_, resp, err := g.client.ListContents(repo.Organization, repo.Name, repo.Branch, path)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil && resp != nil && resp.StatusCode == http.StatusOK {
		return true, nil // a file: its contents are not a list
	}
	if err != nil {
		return false, fmt.Errorf("%s/%s: read %s at %s: %w", repo.Organization, repo.Name, path, repo.Branch, err)
	}
	return true, nil
}

// PullRequests lists the open pull requests of owner/repo that carry every
// one of labels. ErrRepositoryNotFound says the repository is not there
// (or not visible to the token).
func (g *Gitea) PullRequests(_ context.Context, owner, repo string, labels []string) ([]PullRequest, error) {
	prs, err := giteaPages(func(p gitea.ListOptions) ([]*gitea.PullRequest, *gitea.Response, error) {
		return g.client.ListRepoPullRequests(owner, repo, gitea.ListPullRequestsOptions{ListOptions: p, State: gitea.StateOpen})
	})
	var nf *giteaNotFound
	if errors.As(err, &nf) {
		err = fmt.Errorf("%w: %w", ErrRepositoryNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("error listing pull requests for %s/%s: %w", owner, repo, err)
	}
	var out []PullRequest
	for _, pr := range prs {
		names := make([]string, 0, len(pr.Labels))
		for _, l := range pr.Labels {
			names = append(names, l.Name)
		}
		if !hasAll(names, labels) {
			continue
		}
		p := PullRequest{Number: int(pr.Index), Title: pr.Title, Labels: names}
		if pr.Head != nil {
			p.Branch, p.HeadSHA = pr.Head.Ref, pr.Head.Sha
		}
		if pr.Base != nil {
			p.TargetBranch = pr.Base.Ref
		}
		if pr.Poster != nil {
			p.Author = pr.Poster.UserName
		}
		out = append(out, p)
	}
	return out, nil
}

// giteaNotFound is a list Gitea answered with 404.
type giteaNotFound struct{ err error }

func (e *giteaNotFound) Error() string { return e.err.Error() }
func (e *giteaNotFound) Unwrap() error { return e.err }

// giteaPages calls list for every page of a Gitea list and returns the
// entries of all of them.
func giteaPages[T any](list func(gitea.ListOptions) ([]T, *gitea.Response, error)) ([]T, error) {
	var out []T
	for page := 1; ; page++ {
		items, resp, err := list(gitea.ListOptions{Page: page, PageSize: giteaPageSize})
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusNotFound {
				return nil, &giteaNotFound{err: err}
			}
			return nil, err
		}
		out = append(out, items...)
		if len(items) == 0 || !giteaMore(resp, page, len(items), len(out)) {
			return out, nil
		}
	}
}

// giteaMore reports whether a list has pages after page, which gave n
// entries (got in all): its Link header says so, else its X-Total-Count
// does, else a full page may be followed by another. Gitea sends the
// Link header for some lists only (not for a repository's labels).
func giteaMore(resp *gitea.Response, page, n, got int) bool {
	if resp == nil || resp.Response == nil {
		return false
	}
	if resp.NextPage > page {
		return true
	}
	if total, err := strconv.Atoi(resp.Header.Get("X-Total-Count")); err == nil {
		return got < total
	}
	return n == giteaPageSize
}
