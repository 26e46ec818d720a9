package source

import (
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ociChart is a Helm chart in an OCI registry: an oci:// repoURL with
// spec.source.chart. It is fetched and cached as a Helm repository's chart
// is (Charts.Fetch speaks to either).
type ociChart struct{ helmRepository }

func (ociChart) Name() string { return "OCI chart" }

func (ociChart) Claims(src *v1alpha1.ApplicationSource) bool {
	return src.Chart != "" && strings.HasPrefix(src.RepoURL, "oci://")
}
