package render

import (
	"context"
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// checkedOut are the trees of an app's sources and the refs other sources
// may read value files from ($ref/path).
type checkedOut struct {
	trees []*source.Tree // nil for a chart from a Helm repository
	refs  map[string]*source.Tree
}

func (c *checkedOut) revision(i int) string {
	if c.trees[i] == nil {
		return ""
	}
	return c.trees[i].Revision()
}

// checkoutSources resolves and reads the tree of every source that is not
// a Helm repository chart: a Git commit, a local folder or an OCI artifact.
func (e *Engine) checkoutSources(ctx context.Context, multi bool, sources v1alpha1.ApplicationSources) (*checkedOut, error) {
	out := &checkedOut{trees: make([]*source.Tree, len(sources)), refs: map[string]*source.Tree{}}
	fetchers := source.Fetchers{Repos: e.repos, Charts: e.charts}
	for i, src := range sources {
		field := sourceField(multi, i)
		kind := source.KindOf(&src)
		if src.Ref != "" && kind.Packaged() {
			return nil, fmt.Errorf("%s: ref %q on a chart of a %s: refs must be Git sources", field, src.Ref, kind.Name())
		}
		if kind.Packaged() {
			continue
		}
		tree, err := kind.Checkout(ctx, fetchers, &src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		out.trees[i] = tree
		if src.Ref != "" {
			if _, dup := out.refs[src.Ref]; dup {
				return nil, fmt.Errorf("%s: ref %q is used by more than one source", field, src.Ref)
			}
			out.refs[src.Ref] = tree
		}
	}
	return out, nil
}

// isRefOnly reports a source that only provides files to others.
func isRefOnly(src *v1alpha1.ApplicationSource) bool {
	return src.Ref != "" && src.Path == "" && src.Chart == ""
}

func sourceField(multi bool, i int) string {
	if multi {
		return fmt.Sprintf("spec.sources[%d]", i)
	}
	return "spec.source"
}
