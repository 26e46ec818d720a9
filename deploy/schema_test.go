package deploy_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestChartObjectsDecodeStrictly decodes every rendered object into its Go
// type, refusing unknown fields: a misspelt or misplaced field in a
// template fails here rather than at install time. The ServiceMonitor has
// no type here and is the only object left unchecked.
func TestChartObjectsDecodeStrictly(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	unchecked := map[string]bool{"ServiceMonitor": true}
	for name, r := range renders(t) {
		for _, d := range r.docs {
			gvk := d.obj.GroupVersionKind()
			if unchecked[gvk.Kind] {
				continue
			}
			typed, err := scheme.New(gvk)
			if err != nil {
				t.Errorf("%s: %s: %v", name, d.key(), err)
				continue
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.obj.Object, typed, true); err != nil {
				t.Errorf("%s: %s: %v", name, d.key(), err)
			}
		}
	}
}
