package sync

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

func TestPrune(t *testing.T) {
	_, ns, ctx, run := setup(t)
	run.kinds = []schema.GroupKind{configMapGK}
	if st, _ := run.run(ctx, fixture(t, "sync/prune-first.yaml", ns)); st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync %s: %s", st.Phase, st.Message)
	}

	st, exec := run.run(ctx, fixture(t, "sync/prune-second.yaml", ns))
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("second sync %s: %s", st.Phase, st.Message)
	}
	var got []string
	for _, e := range exec.Events() {
		switch {
		case e.Type == EventPrune, e.Type == EventPruneSkipped:
			got = append(got, string(e.Type)+" "+kindAndName(e.Task[len("prune:"):]))
		case e.Type == EventTaskDone && len(e.Task) > 6 && e.Task[:6] == "prune:":
			got = append(got, "Gone "+kindAndName(e.Task[len("prune:"):]))
		}
	}
	want := []string{
		"Prune ConfigMap c", "Gone ConfigMap c", // wave 2 first: prune waves run in reverse
		"Prune ConfigMap b", "Gone ConfigMap b",
		"Prune ConfigMap a", "PruneSkipped ConfigMap keep", "Gone ConfigMap a",
		"Prune ConfigMap last", // PruneLast: after the last wave
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prune events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"keep", "x"}, liveNames(t, run)); diff != "" {
		t.Errorf("live ConfigMaps (-want +got):\n%s", diff)
	}

	// An empty desired state prunes nothing unless allowed.
	if _, err := run.plan(ctx, nil); !errors.Is(err, ErrEmptyDesiredState) {
		t.Fatalf("plan of an empty desired state: %v, want ErrEmptyDesiredState", err)
	}
	if diff := cmp.Diff([]string{"keep", "x"}, liveNames(t, run)); diff != "" {
		t.Errorf("live ConfigMaps after the refused plan (-want +got):\n%s", diff)
	}
	run.opts.AllowEmpty = true
	if st, _ := run.run(ctx, nil); st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("empty sync %s: %s", st.Phase, st.Message)
	}
	waitFor(t, func() bool { return cmp.Equal([]string{"keep"}, liveNames(t, run)) })
}

// liveNames returns the names of the ConfigMaps the app tracks.
func liveNames(t *testing.T, run *syncRun) []string {
	t.Helper()
	live, err := run.cluster.ListTracked(t.Context(), kube.Tracking{AppName: run.opts.AppName}, kube.ListOptions{Kinds: run.kinds, Namespace: run.opts.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, obj := range live {
		if obj.GetDeletionTimestamp() == nil {
			out = append(out, obj.GetName())
		}
	}
	return out
}

func TestPruneConfirm(t *testing.T) {
	_, ns, ctx, run := setup(t)
	run.kinds = []schema.GroupKind{configMapGK}
	if st, _ := run.run(ctx, fixture(t, "sync/confirm.yaml", ns)); st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("first sync %s: %s", st.Phase, st.Message)
	}
	desired := fixture(t, "sync/prune-second.yaml", ns)
	plan, err := run.plan(ctx, desired)
	if err != nil {
		t.Fatal(err)
	}
	st := &State{}
	if _, err := run.execute(ctx, plan, st); !errors.Is(err, ErrAwaitingPruneConfirmation) {
		t.Fatalf("Run() = %v, want ErrAwaitingPruneConfirmation", err)
	}
	if st.Phase != v1alpha1.OperationRunning || st.Message != "waiting for pruning confirmation of v1/ConfigMap/precious" {
		t.Errorf("state %s: %q", st.Phase, st.Message)
	}
	if diff := cmp.Diff([]string{"precious"}, liveNames(t, run)); diff != "" {
		t.Errorf("live ConfigMaps before the confirmation (-want +got):\n%s", diff)
	}
	run.opts.PruneConfirmed = true
	if _, err := run.execute(ctx, plan, st); err != nil || st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("confirmed sync: %v %s: %s", err, st.Phase, st.Message)
	}
	waitFor(t, func() bool { return cmp.Equal([]string{"x"}, liveNames(t, run)) })
}
