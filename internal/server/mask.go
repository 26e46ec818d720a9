package server

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
)

// maskSecret returns a copy of a core Secret whose data and stringData
// values are runs of `+` (equal values, equal runs; at least 8), as Argo
// CD shows them, without the last-applied annotation (which holds the
// values in clear). Other objects are returned as they are.
func maskSecret(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil || u.GetKind() != "Secret" || u.GroupVersionKind().Group != "" {
		return u
	}
	out := diff.MaskSecretValues(u, map[string]string{})
	if ann := out.GetAnnotations(); ann[kube.AnnotationLastApplied] != "" {
		delete(ann, kube.AnnotationLastApplied)
		out.SetAnnotations(ann)
	}
	return out
}

// isGone reports a missing object or a kind the cluster does not serve.
func isGone(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}
