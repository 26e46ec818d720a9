package appset

import (
	"context"
	"regexp"
	"slices"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/scm"
)

// pathChecker says whether a path exists on a repository's branch.
type pathChecker interface {
	PathExists(ctx context.Context, repo scm.Repository, path string) (bool, error)
}

// repoFilter is one compiled SCM provider filter.
type repoFilter struct {
	repository, label, branch *regexp.Regexp
	pathsExist, pathsAbsent   []string
}

// branchLevel reports whether the filter reads branches (paths or a
// branch pattern); the others read only the repository.
func (f repoFilter) branchLevel() bool {
	return f.branch != nil || len(f.pathsExist) > 0 || len(f.pathsAbsent) > 0
}

func (f repoFilter) empty() bool {
	return f.repository == nil && f.label == nil && !f.branchLevel()
}

// filterRepos keeps, as Argo CD does, the repositories that match any
// repository-level filter (repositoryMatch, labelMatch) and then the
// branches that match any branch-level filter (pathsExist,
// pathsDoNotExist, branchMatch); every condition of one filter must hold,
// and an empty filter is ignored.
func filterRepos(ctx context.Context, paths pathChecker, repos []scm.Repository, specs []v1alpha1.SCMProviderGeneratorFilter) ([]scm.Repository, error) {
	var repoLevel, branchLevel []repoFilter
	for _, s := range specs {
		f, err := compileRepoFilter(s)
		if err != nil {
			return nil, err
		}
		switch {
		case f.empty():
		case f.branchLevel():
			branchLevel = append(branchLevel, f)
		default:
			repoLevel = append(repoLevel, f)
		}
	}
	var out []scm.Repository
	for _, r := range repos {
		ok, err := anyMatch(ctx, paths, r, repoLevel)
		if err == nil && ok {
			ok, err = anyMatch(ctx, paths, r, branchLevel)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func compileRepoFilter(s v1alpha1.SCMProviderGeneratorFilter) (repoFilter, error) {
	var f repoFilter
	var err error
	if f.repository, err = compileMatch("RepositoryMatch", s.RepositoryMatch); err != nil {
		return f, err
	}
	if f.label, err = compileMatch("LabelMatch", s.LabelMatch); err != nil {
		return f, err
	}
	if f.branch, err = compileMatch("BranchMatch", s.BranchMatch); err != nil {
		return f, err
	}
	f.pathsExist, f.pathsAbsent = s.PathsExist, s.PathsDoNotExist
	return f, nil
}

// anyMatch reports whether r passes one of filters (true when there are
// none).
func anyMatch(ctx context.Context, paths pathChecker, r scm.Repository, filters []repoFilter) (bool, error) {
	if len(filters) == 0 {
		return true, nil
	}
	for _, f := range filters {
		ok, err := f.match(ctx, paths, r)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// match reports whether every condition of f holds for r.
func (f repoFilter) match(ctx context.Context, paths pathChecker, r scm.Repository) (bool, error) {
	if f.repository != nil && !f.repository.MatchString(r.Name) {
		return false, nil
	}
	if f.label != nil && !slices.ContainsFunc(r.Labels, f.label.MatchString) {
		return false, nil
	}
	if f.branch != nil && !f.branch.MatchString(r.Branch) {
		return false, nil
	}
	for _, p := range f.pathsExist {
		if ok, err := paths.PathExists(ctx, r, p); err != nil || !ok {
			return false, err
		}
	}
	for _, p := range f.pathsAbsent {
		if ok, err := paths.PathExists(ctx, r, p); err != nil || ok {
			return false, err
		}
	}
	return true, nil
}
