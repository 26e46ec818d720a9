package diff

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// annotationLastApplied is client-side apply's record of the last apply.
const annotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Normalize returns a copy of obj without what the server owns or what does
// not describe the desired state (managedFields, resourceVersion, uid,
// generation, creationTimestamp, selfLink, status, the last-applied
// annotation), then with the fields the rules ignore removed. live is the
// object whose managedFields say which fields managedFieldsManagers own.
func Normalize(obj, live *unstructured.Unstructured, rules []IgnoreRule) (*unstructured.Unstructured, error) {
	// The status is never compared, so it is not copied (an Application's
	// is most of it).
	out := &unstructured.Unstructured{Object: make(map[string]any, len(obj.Object))}
	for k, v := range obj.Object {
		if k != "status" {
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	for _, field := range []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"} {
		unstructured.RemoveNestedField(out.Object, "metadata", field)
	}
	// out is a copy of its own: its annotations change in place.
	if v, _, _ := unstructured.NestedFieldNoCopy(out.Object, "metadata", "annotations"); v != nil {
		if annotations, ok := v.(map[string]any); ok {
			delete(annotations, annotationLastApplied)
			if len(annotations) == 0 {
				unstructured.RemoveNestedField(out.Object, "metadata", "annotations")
			}
		}
	}
	if len(rules) == 0 {
		return out, nil
	}
	return ignore(out, live, rules)
}
