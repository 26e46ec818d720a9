package server

import (
	"fmt"
	"sort"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied holds a copy of an object as applied by kubectl: for a
// Secret, its values in clear.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// maskSecret returns a copy of a core Secret whose data and stringData
// values are runs of `+` (equal values, equal runs; at least 8), as Argo
// CD shows them, without the last-applied annotation. Other objects are
// returned as they are.
func maskSecret(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil || u.GetKind() != "Secret" || u.GroupVersionKind().Group != "" {
		return u
	}
	out := u.DeepCopy()
	masks := map[string]string{}
	for _, field := range []string{"data", "stringData"} {
		values, ok, _ := unstructured.NestedMap(out.Object, field)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := fmt.Sprint(values[k])
			if _, seen := masks[v]; !seen {
				masks[v] = strings.Repeat("+", 8+len(masks))
			}
			values[k] = masks[v]
		}
		_ = unstructured.SetNestedMap(out.Object, values, field)
	}
	if ann := out.GetAnnotations(); ann[lastApplied] != "" {
		delete(ann, lastApplied)
		out.SetAnnotations(ann)
	}
	return out
}

// isGone reports a missing object or a kind the cluster does not serve.
func isGone(err error) bool {
	return kerrors.IsNotFound(err) || meta.IsNoMatchError(err)
}
