package appset

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gosimple/slug"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/scm"
)

// prService is a Git hosting service as the pull request generator reads
// it.
type prService interface {
	PullRequests(ctx context.Context, owner, repo string, labels []string) ([]scm.PullRequest, error)
}

// prSource is the repository a pull request generator reads, and where.
type prSource struct {
	client      prService
	owner, repo string
	labels      []string
}

// pullRequest yields one parameter set per open pull request of a GitHub
// or Gitea repository that carries the labels and passes the filters.
func (g *generation) pullRequest(pg *v1alpha1.PullRequestGenerator, parent params) ([]params, error) {
	g.noteRequeue(requeueOr(pg.RequeueAfterSeconds, DefaultSCMRequeue))
	src, err := g.prSource(pg)
	if err != nil {
		return nil, err
	}
	prs, err := src.client.PullRequests(g.ctx, src.owner, src.repo, src.labels)
	if errors.Is(err, scm.ErrRepositoryNotFound) && pg.ContinueOnRepoNotFoundError {
		logctx.From(g.ctx).Warn("repository not found; the pull request generator yields nothing", "owner", src.owner, "repo", src.repo, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("error listing repos: %w", err)
	}
	filters, err := compilePRFilters(pg.Filters)
	if err != nil {
		return nil, err
	}
	var out []params
	for _, pr := range prs {
		if !filters.match(pr) {
			continue
		}
		p := g.prParams(pr)
		if err := appendValues(p, pg.Values, parent, g.r); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// prSource is the provider pg names and the repository it reads.
func (g *generation) prSource(pg *v1alpha1.PullRequestGenerator) (prSource, error) {
	var src prSource
	var api string
	switch {
	case pg.Github != nil:
		gh := pg.Github
		src.owner, src.repo, src.labels, api = gh.Owner, gh.Repo, gh.Labels, gh.API
	case pg.Gitea != nil:
		gt := pg.Gitea
		src.owner, src.repo, src.labels, api = gt.Owner, gt.Repo, gt.Labels, gt.API
	default:
		return src, unsupportedProvider("pullRequest", present(map[string]bool{"gitlab": pg.Gitlab != nil,
			"bitbucketServer": pg.BitbucketServer != nil, "bitbucket": pg.Bitbucket != nil, "azuredevops": pg.AzureDevOps != nil}))
	}
	err := g.in.SCM.check(api)
	if err == nil && pg.Github != nil {
		src.client, err = g.github(api, pg.Github.TokenRef, pg.Github.AppSecretName)
	} else if err == nil {
		src.client, err = g.gitea(api, pg.Gitea.TokenRef, pg.Gitea.Insecure)
	}
	if err != nil {
		return src, fmt.Errorf("failed to select pull request service provider: %w", err)
	}
	return src, nil
}

// prParams are Argo CD's parameters of a pull request; labels only with
// goTemplate, as a list.
func (g *generation) prParams(pr scm.PullRequest) params {
	p := params{
		"number": strconv.Itoa(pr.Number), "title": pr.Title, "author": pr.Author,
		"branch": pr.Branch, "branch_slug": branchSlug(pr.Branch),
		"target_branch": pr.TargetBranch, "target_branch_slug": branchSlug(pr.TargetBranch),
		"head_sha": pr.HeadSHA, "head_short_sha": prefix(pr.HeadSHA, 8), "head_short_sha_7": prefix(pr.HeadSHA, 7),
	}
	if g.r.goTemplate {
		labels := make([]any, len(pr.Labels))
		for i, l := range pr.Labels {
			labels[i] = l
		}
		p["labels"] = labels
	}
	return p
}

// slugMax is the longest branch slug, Argo CD's.
const slugMax = 50

// branchSlug is a branch name as a URL and DNS friendly slug, as Argo
// CD's branch_slug: underscores become dashes, then gosimple/slug, cut at
// the last dash within 50 characters (or at 50 when there is none).
func branchSlug(branch string) string {
	s := slug.Make(strings.ReplaceAll(strings.TrimSpace(branch), "_", "-"))
	if len(s) <= slugMax {
		return s
	}
	if i := strings.LastIndex(s[:slugMax+1], "-"); i >= 0 {
		return s[:i]
	}
	return s[:slugMax]
}

// prFilters are a pull request generator's compiled filters; a pull
// request passes when it matches any of them (all when there are none).
type prFilters []prFilter

type prFilter struct{ branch, target, title *regexp.Regexp }

func compilePRFilters(specs []v1alpha1.PullRequestGeneratorFilter) (prFilters, error) {
	out := make(prFilters, 0, len(specs))
	for _, s := range specs {
		var f prFilter
		var err error
		if f.branch, err = compileMatch("BranchMatch", s.BranchMatch); err != nil {
			return nil, err
		}
		if f.target, err = compileMatch("TargetBranchMatch", s.TargetBranchMatch); err != nil {
			return nil, err
		}
		if f.title, err = compileMatch("TitleMatch", s.TitleMatch); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (fs prFilters) match(pr scm.PullRequest) bool {
	if len(fs) == 0 {
		return true
	}
	for _, f := range fs {
		if (f.branch == nil || f.branch.MatchString(pr.Branch)) && (f.target == nil || f.target.MatchString(pr.TargetBranch)) &&
			(f.title == nil || f.title.MatchString(pr.Title)) {
			return true
		}
	}
	return false
}
