package sync

import (
	"maps"
	"slices"
	stdsync "sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
)

// TestAppliedObjectsKeepNoManagedFields checks what a sync keeps of the API
// server's answers to its writes (Plan.LiveObjects, which the comparison
// after the sync reads): no managedFields, as the controller's caches,
// unless an ignoreDifferences rule finds fields by their managers there.
func TestAppliedObjectsKeepNoManagedFields(t *testing.T) {
	tests := map[string]struct {
		ignore []diff.IgnoreRule
		want   bool
	}{
		"no ignore rules":                 {want: false},
		"a rule by JSON pointer":          {ignore: []diff.IgnoreRule{{Kind: "ConfigMap", JSONPointers: []string{"/data"}}}, want: false},
		"a rule by managedFieldsManagers": {ignore: []diff.IgnoreRule{{Kind: "ConfigMap", ManagedFieldsManagers: []string{"kube-controller-manager"}}}, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ns, ctx, run := setup(t)
			run.opts.IgnoreDifferences = tc.ignore
			run.kinds = append(run.kinds, configMapGK)
			plan, err := run.plan(ctx, configMaps(2, 1, ns))
			if err != nil {
				t.Fatal(err)
			}
			st := &State{}
			if _, err := run.execute(ctx, plan, st); err != nil {
				t.Fatal(err)
			}
			if st.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("sync ended %s: %s", st.Phase, st.Message)
			}
			applied := plan.LiveObjects()
			if len(applied) != 2 {
				t.Fatalf("%d applied objects, want 2", len(applied))
			}
			for _, obj := range applied {
				if got := len(obj.GetManagedFields()) > 0; got != tc.want {
					t.Errorf("%s keeps managedFields: %v, want %v", obj.GetName(), got, tc.want)
				}
			}
		})
	}
}

// recordedDryRuns is a DryRunCache that knows no dry run and records the
// writes a sync reports.
type recordedDryRuns struct {
	mu      stdsync.Mutex
	applied map[string]*unstructured.Unstructured
}

func (r *recordedDryRuns) Succeeded(_, _ *unstructured.Unstructured, _ kube.ApplyMode) bool {
	return false
}

func (r *recordedDryRuns) Applied(desired, applied *unstructured.Unstructured, _ kube.ApplyMode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied[desired.GetName()] = applied
}

// TestSyncReportsEachWrite: the DryRunCache learns each object's write as
// the API server answered it (the sync's prediction for the refresh after
// it), and not the hooks'.
func TestSyncReportsEachWrite(t *testing.T) {
	_, ns, ctx, run := setup(t)
	dryRuns := &recordedDryRuns{applied: map[string]*unstructured.Unstructured{}}
	run.opts.DryRuns = dryRuns
	run.kinds = append(run.kinds, configMapGK)
	desired := append(configMaps(2, 1, ns), fixture(t, "sync/hooks.yaml", ns)...)
	st, _ := run.run(ctx, desired)
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync ended %s: %s", st.Phase, st.Message)
	}
	if got, want := slices.Sorted(maps.Keys(dryRuns.applied)), []string{"app", "cm-000", "cm-001"}; !slices.Equal(got, want) {
		t.Fatalf("writes reported: %v, want %v (the ConfigMaps, not the hooks)", got, want)
	}
	for name, obj := range dryRuns.applied {
		live, err := run.cluster.GetOptional(ctx, kube.RefOf(obj))
		if err != nil || live == nil {
			t.Fatalf("%s: %v %v", name, live, err)
		}
		if obj.GetResourceVersion() != live.GetResourceVersion() {
			t.Errorf("%s reported at version %s, the server has %s", name, obj.GetResourceVersion(), live.GetResourceVersion())
		}
	}
}
