package diff

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IsSecret reports a core Secret, whose values are never shown.
func IsSecret(gk schema.GroupKind) bool { return gk.Group == "" && gk.Kind == "Secret" }

// MaskSecretValues returns a copy of obj (a Secret) with every value of
// data and stringData replaced by a run of "+", as Argo CD shows them:
// equal values get the same mask, different ones different masks. masks
// maps values to their masks and gains the new ones, so the live and the
// desired copy of one Secret can share it and a diff shows which keys
// changed without showing a value. A nil obj stays nil.
func MaskSecretValues(obj *unstructured.Unstructured, masks map[string]string) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := obj.DeepCopy()
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
	return out
}
