package compare

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
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
			desired, live := child(tc.Desired), child(tc.Live)
			rules := ignoreRulesFor(&v1alpha1.Application{}, parity).of(desired, live)
			res, err := diff.Compare(t.Context(), desired, live, diff.Options{Ignore: rules})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if res.Status != want {
				t.Errorf("%s (argo parity %v): %s, want %s", name, parity, res.Status, want)
			}
		}
	}
}

// TestIgnoreRulesOf: the jq program for deletion-hook finalizers runs only
// on a child that lists one, desired or live; an app's own rules always
// apply.
func TestIgnoreRulesOf(t *testing.T) {
	own := v1alpha1.ResourceIgnoreDifferences{Kind: "ConfigMap", JQPathExpressions: []string{".data.x"}}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{IgnoreDifferences: []v1alpha1.ResourceIgnoreDifferences{own}}}
	withFinalizers := func(f ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Application"}}
		u.SetFinalizers(f)
		return u
	}
	tests := map[string]struct {
		desired, live *unstructured.Unstructured
		parity        bool
		wantJQ        int
	}{
		"no finalizers":                   {desired: withFinalizers(), live: withFinalizers(), wantJQ: 1},
		"created, none in Git":            {desired: withFinalizers(), wantJQ: 1},
		"someone else's finalizer":        {desired: withFinalizers(), live: withFinalizers("example.com/keep"), wantJQ: 1},
		"live lists a pre-delete one":     {desired: withFinalizers(), live: withFinalizers(v1alpha1.FinalizerPreDelete), wantJQ: 2},
		"Git lists a post-delete cleanup": {desired: withFinalizers(v1alpha1.FinalizerPostDeleteCleanup), wantJQ: 2},
		"Argo CD parity has no such rule": {desired: withFinalizers(), live: withFinalizers(v1alpha1.FinalizerPreDelete), parity: true, wantJQ: 1},
	}
	for name, tc := range tests {
		rules := ignoreRulesFor(app, tc.parity).of(tc.desired, tc.live)
		jq := 0
		for _, r := range rules {
			jq += len(r.JQPathExpressions)
		}
		if jq != tc.wantJQ || rules[0].Kind != "ConfigMap" {
			t.Errorf("%s: %d jq programs in %+v, want %d after the app's own rule", name, jq, rules, tc.wantJQ)
		}
	}
	if len(app.Spec.IgnoreDifferences) != 1 {
		t.Errorf("the app's rules changed: %+v", app.Spec.IgnoreDifferences)
	}
}
