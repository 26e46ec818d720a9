package compare

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/diff"
)

// TestChildDeletionHookFinalizers: a parent's diff of a child Application
// leaves out the deletion-hook finalizers the child's controller adds,
// unless Argo CD parity asks for Argo CD's drift.
func TestChildDeletionHookFinalizers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "childfinalizers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]struct {
		Desired, Live    []string
		Want, WantParity diff.Status
	}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatalf("testdata/childfinalizers.yaml: %v", err)
	}
	child := func(finalizers []string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "calico", "namespace": "argocd"},
			"spec":     map[string]any{"project": "default"},
		}}
		u.SetFinalizers(finalizers)
		return u
	}
	for name, tc := range cases {
		for _, parity := range []bool{false, true} {
			want := tc.Want
			if parity {
				want = tc.WantParity
			}
			res, err := diff.Compare(t.Context(), child(tc.Desired), child(tc.Live), diff.Options{Ignore: controllerOwnedFields(parity)})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if res.Status != want {
				t.Errorf("%s (argo parity %v): %s, want %s", name, parity, res.Status, want)
			}
		}
	}
}
