package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ociArtifact is an OCI artifact of plain files (Argo CD 3.1): an oci://
// repoURL without a chart, targetRevision a tag, a digest or a range,
// unpacked into a tree whose revision is its digest.
type ociArtifact struct{}

func (ociArtifact) Name() string { return "OCI artifact" }

func (ociArtifact) Claims(src *v1alpha1.ApplicationSource) bool {
	return src.Chart == "" && strings.HasPrefix(src.RepoURL, "oci://")
}

func (ociArtifact) Packaged() bool { return false }

func (ociArtifact) PinsRevision() bool { return false }

func (k ociArtifact) Checkout(ctx context.Context, f Fetchers, src *v1alpha1.ApplicationSource) (*Tree, error) {
	if f.Charts == nil {
		return nil, fmt.Errorf("%s %s: no OCI registry access configured", k.Name(), RedactURL(src.RepoURL))
	}
	return f.Charts.Artifact(ctx, src.RepoURL, src.TargetRevision)
}

// CacheRevision is the artifact's digest, the revision of its tree.
func (ociArtifact) CacheRevision(_ *v1alpha1.ApplicationSource, tree *Tree) (string, bool) {
	if tree == nil || tree.Revision() == "" {
		return "", false
	}
	return tree.Revision(), true
}
