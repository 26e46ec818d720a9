package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// helmRepository is a chart of a Helm repository (index.yaml over HTTP):
// spec.source.chart with targetRevision its version or a range.
type helmRepository struct{}

func (helmRepository) Name() string { return "Helm repository" }

func (helmRepository) Claims(src *v1alpha1.ApplicationSource) bool {
	return src.Chart != "" && !strings.HasPrefix(src.RepoURL, "oci://")
}

func (helmRepository) Packaged() bool { return true }

func (helmRepository) PinsRevision() bool { return false }

func (k helmRepository) Checkout(context.Context, Fetchers, *v1alpha1.ApplicationSource) (*Tree, error) {
	return nil, fmt.Errorf("a chart of a %s has no files to check out", k.Name())
}

// CacheRevision is the chart's version when it is exact.
func (helmRepository) CacheRevision(src *v1alpha1.ApplicationSource, _ *Tree) (string, bool) {
	return src.TargetRevision, exactVersion(src.TargetRevision)
}
