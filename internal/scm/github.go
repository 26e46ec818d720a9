package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v88/github"
)

// GitHub is the GitHub API (api.github.com, or a GitHub Enterprise server).
type GitHub struct {
	client *github.Client
}

// GitHubOptions say how GitHub is reached.
type GitHubOptions struct {
	// API is a GitHub Enterprise URL ("https://ghe.example.com", to which
	// api/v3/ is added); empty means api.github.com.
	API string
	// Token authenticates (a bearer token); empty is anonymous.
	Token string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
}

// NewGitHub returns a GitHub client.
func NewGitHub(o GitHubOptions) (*GitHub, error) {
	opts := []github.ClientOptionsFunc{}
	if o.HTTPClient != nil {
		opts = append(opts, github.WithHTTPClient(o.HTTPClient))
	}
	if o.Token != "" {
		opts = append(opts, github.WithAuthToken(o.Token))
	}
	if api := strings.TrimSpace(o.API); api != "" {
		if !strings.HasSuffix(api, "/") {
			api += "/"
		}
		opts = append(opts, github.WithEnterpriseURLs(api, api))
	}
	c, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github api %q: %w", o.API, err)
	}
	return &GitHub{client: c}, nil
}

// Repositories lists the repositories of organization, one entry per
// branch listed (the default branch unless AllBranches). A repository
// whose default branch does not exist (an empty one) yields nothing.
func (g *GitHub) Repositories(ctx context.Context, organization string, o RepositoryOptions) ([]Repository, error) {
	var out []Repository
	for repo, err := range g.client.Repositories.ListByOrgIter(ctx, organization, &github.RepositoryListByOrgOptions{ListOptions: github.ListOptions{PerPage: 100}}) {
		if err != nil {
			return nil, fmt.Errorf("error listing repos: %w", err)
		}
		if o.ExcludeArchived && repo.GetArchived() {
			continue
		}
		url, err := cloneURL(repo, o.CloneProtocol)
		if err != nil {
			return nil, err
		}
		base := Repository{
			Organization: repo.GetOwner().GetLogin(), Name: repo.GetName(), URL: url,
			Labels: repo.Topics, ID: repo.GetID(), Archived: repo.GetArchived(),
		}
		branches, err := g.branches(ctx, repo, o.AllBranches)
		if err != nil {
			return nil, fmt.Errorf("error listing branches for %s/%s: %w", base.Organization, base.Name, err)
		}
		for _, b := range branches {
			r := base
			r.Branch, r.SHA = b.GetName(), b.GetCommit().GetSHA()
			out = append(out, r)
		}
	}
	return out, nil
}

func cloneURL(repo *github.Repository, protocol string) (string, error) {
	switch protocol {
	case "", "ssh":
		return repo.GetSSHURL(), nil
	case "https":
		return repo.GetCloneURL(), nil
	}
	return "", fmt.Errorf("unknown clone protocol for GitHub %v", protocol)
}

// branches are the repository's default branch, or all of them.
func (g *GitHub) branches(ctx context.Context, repo *github.Repository, all bool) ([]*github.Branch, error) {
	owner, name := repo.GetOwner().GetLogin(), repo.GetName()
	if !all {
		b, resp, err := g.client.Repositories.GetBranch(ctx, owner, name, repo.GetDefaultBranch(), 0)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, nil // an empty repository
		}
		if err != nil {
			return nil, err
		}
		return []*github.Branch{b}, nil
	}
	var out []*github.Branch
	for b, err := range g.client.Repositories.ListBranchesIter(ctx, owner, name, &github.BranchListOptions{ListOptions: github.ListOptions{PerPage: 100}}) {
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// PathExists reports whether path (a file or a folder) exists on the
// repository's branch.
func (g *GitHub) PathExists(ctx context.Context, repo Repository, path string) (bool, error) {
	path = strings.TrimSuffix(path, "/")
	_, _, resp, err := g.client.Repositories.GetContents(ctx, repo.Organization, repo.Name, path, &github.RepositoryContentGetOptions{Ref: repo.Branch})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s/%s: read %s at %s: %w", repo.Organization, repo.Name, path, repo.Branch, err)
	}
	return true, nil
}

// PullRequests lists the open pull requests of owner/repo that carry every
// one of labels. ErrRepositoryNotFound says the repository is not there
// (or not visible to the token).
func (g *GitHub) PullRequests(ctx context.Context, owner, repo string, labels []string) ([]PullRequest, error) {
	var out []PullRequest
	for pr, err := range g.client.PullRequests.ListIter(ctx, owner, repo, &github.PullRequestListOptions{ListOptions: github.ListOptions{PerPage: 100}}) {
		if err != nil {
			var er *github.ErrorResponse
			if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
				err = fmt.Errorf("%w: %w", ErrRepositoryNotFound, err)
			}
			return nil, fmt.Errorf("error listing pull requests for %s/%s: %w", owner, repo, err)
		}
		names := make([]string, 0, len(pr.Labels))
		for _, l := range pr.Labels {
			names = append(names, l.GetName())
		}
		if !hasAll(names, labels) {
			continue
		}
		out = append(out, PullRequest{
			Number: pr.GetNumber(), Title: pr.GetTitle(), Branch: pr.GetHead().GetRef(), TargetBranch: pr.GetBase().GetRef(),
			HeadSHA: pr.GetHead().GetSHA(), Author: pr.GetUser().GetLogin(), Labels: names,
		})
	}
	return out, nil
}

// hasAll reports whether have holds every one of want.
func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
