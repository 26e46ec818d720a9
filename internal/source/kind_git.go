package source

import (
	"context"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// gitRepository is a Git repository (remote, a local one, or a plain
// folder), read at a revision a comparison pins to a commit.
type gitRepository struct{}

func (gitRepository) Name() string { return "Git repository" }

func (gitRepository) Claims(*v1alpha1.ApplicationSource) bool { return true }

func (gitRepository) Packaged() bool { return false }

func (gitRepository) PinsRevision() bool { return true }

func (gitRepository) Checkout(ctx context.Context, f Fetchers, src *v1alpha1.ApplicationSource) (*Tree, error) {
	return f.Repos.Checkout(ctx, src.RepoURL, src.TargetRevision)
}

// CacheRevision is the commit the tree was read at; a plain folder has
// none.
func (gitRepository) CacheRevision(_ *v1alpha1.ApplicationSource, tree *Tree) (string, bool) {
	if tree == nil || tree.Revision() == "" {
		return "", false
	}
	return tree.Revision(), true
}
