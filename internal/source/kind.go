package source

import (
	"context"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Kind is a kind of repository an Application's source reads from: how a
// source of the kind is recognized, whether it has files to check out or
// is a chart its renderer fetches whole, whether a comparison pins its
// revision to a commit first, and what identifies its content in a render
// cache. Each kind is one type in a file of its own (kind_*.go),
// registered once in kinds; renderers and comparisons ask KindOf instead
// of testing a source's fields.
//
// Mirrors (--mirror, argocd-cm wavecd.mirrors) are not a kind: they are
// how Repos and Charts reach any kind's URL from a local folder, Git
// repository or registry.
type Kind interface {
	// Name names the kind in messages.
	Name() string
	// Claims reports whether src is of this kind.
	Claims(src *v1alpha1.ApplicationSource) bool
	// Packaged reports a chart its renderer fetches whole: it has no
	// files to check out and cannot be a ref source.
	Packaged() bool
	// PinsRevision reports whether a comparison resolves the source's
	// revision to a commit before rendering (a chart version or an
	// artifact digest resolves while rendering).
	PinsRevision() bool
	// Checkout reads the source's files at its revision; a packaged
	// chart has none.
	Checkout(ctx context.Context, f Fetchers, src *v1alpha1.ApplicationSource) (*Tree, error)
	// CacheRevision is what identifies the source's content in a render
	// cache, read from tree for kinds with files: a commit, an exact
	// chart version; false when nothing does (a plain folder, a version
	// range).
	CacheRevision(src *v1alpha1.ApplicationSource, tree *Tree) (string, bool)
}

// Fetchers reach repositories: Git and local folders (Repos), Helm
// repositories and OCI registries (Charts, nil when not configured).
type Fetchers struct {
	Repos  *Repos
	Charts *Charts
}

// kinds are the kinds of repository, the first that claims a source wins:
// Git, last, claims every source no other does.
var kinds = []Kind{helmRepository{}, ociChart{}, ociArtifact{}, gitRepository{}}

// KindOf returns the kind of repository src reads from.
func KindOf(src *v1alpha1.ApplicationSource) Kind {
	for _, k := range kinds {
		if k.Claims(src) {
			return k
		}
	}
	return gitRepository{}
}

// exactVersion reports a chart version that names one release, which a
// render cache may key on (a range may resolve to a newer one later).
func exactVersion(v string) bool {
	_, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	return err == nil && v != ""
}
