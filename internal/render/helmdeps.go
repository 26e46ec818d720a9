package render

import (
	"context"
	"fmt"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/wavecd/wavecd/internal/source"
)

// addDependencies loads the dependencies a chart declares but does not
// vendor in charts/, like `helm dependency build`: file:// ones from the
// same repository, others from their Helm repository or OCI registry (or a
// mirror), at the version Chart.lock pins or else the newest matching the
// constraint.
func (h *Helm) addDependencies(ctx context.Context, c *chart.Chart, tree *source.Tree, dir string, depth int) error {
	if depth > maxChartDepth {
		return fmt.Errorf("chart %s: dependencies nested too deep", c.Name())
	}
	present := map[string]bool{}
	for _, d := range c.Dependencies() {
		present[d.Name()] = true
	}
	for _, dep := range c.Metadata.Dependencies {
		if present[dep.Name] {
			continue
		}
		sub, err := h.loadDependency(ctx, c, dep, tree, dir, depth)
		if err != nil {
			return fmt.Errorf("chart %s: dependency %s: %w", c.Name(), dep.Name, err)
		}
		c.AddDependency(sub)
		present[dep.Name] = true
	}
	return nil
}

func (h *Helm) loadDependency(ctx context.Context, parent *chart.Chart, dep *chart.Dependency, tree *source.Tree, dir string, depth int) (*chart.Chart, error) {
	repo := dep.Repository
	switch {
	case strings.HasPrefix(repo, "file://"):
		if tree == nil {
			return nil, fmt.Errorf("file:// dependency of a chart that is not in Git")
		}
		return h.loadFileDependency(ctx, tree, dir, strings.TrimPrefix(repo, "file://"), depth)
	case repo == "":
		return nil, fmt.Errorf("not found in charts/ and no repository given")
	case strings.HasPrefix(repo, "@") || strings.HasPrefix(repo, "alias:"):
		return nil, fmt.Errorf("repository %q: named repositories are not supported; use the repository URL", repo)
	}
	if h.Charts == nil {
		return nil, fmt.Errorf("repository %s: no Helm repository access configured", source.RedactURL(repo))
	}
	fetched, err := h.Charts.Fetch(ctx, repo, dep.Name, lockedVersion(parent, dep))
	if err != nil {
		return nil, err
	}
	return h.loadFetched(ctx, fetched, depth+1)
}

func (h *Helm) loadFileDependency(ctx context.Context, tree *source.Tree, dir, rel string, depth int) (*chart.Chart, error) {
	joined, err := source.Join(dir, rel, source.JoinOptions{})
	if err != nil {
		return nil, err
	}
	resolved, err := tree.Resolve(joined)
	if err != nil {
		return nil, err
	}
	sub, err := loadTreeChart(tree, resolved)
	if err != nil {
		return nil, err
	}
	return sub, h.addDependencies(ctx, sub, tree, resolved, depth+1)
}

// lockedVersion is the version Chart.lock pins for dep, else its constraint.
func lockedVersion(c *chart.Chart, dep *chart.Dependency) string {
	if c.Lock != nil {
		for _, l := range c.Lock.Dependencies {
			if l.Name == dep.Name && l.Repository == dep.Repository {
				return l.Version
			}
		}
	}
	return dep.Version
}
