package application

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// TestProgressReadsTheEngineState: SyncProgress is a view of the state the
// sync engine saves; its step, stall and every task (the API's SyncTask,
// which the engine saves as it is) must read back from what the engine
// writes, or a reader would see nothing after a change to the engine.
func TestProgressReadsTheEngineState(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	st := wsync.State{ID: "abc", Phase: v1alpha1.OperationRunning, SyncPhase: v1alpha1.SyncPhasePostSync, Wave: 2, Stalled: "pods cannot be scheduled"}
	var want []v1alpha1.SyncTask
	phases := []v1alpha1.TaskPhase{v1alpha1.TaskPending, v1alpha1.TaskDryRunOK, v1alpha1.TaskSkipped, v1alpha1.TaskApplied,
		v1alpha1.TaskRunning, v1alpha1.TaskSucceeded, v1alpha1.TaskFailed, v1alpha1.TaskPruned}
	types := []v1alpha1.TaskType{v1alpha1.TaskApply, v1alpha1.TaskPrune, v1alpha1.TaskHook, v1alpha1.TaskNamespace}
	for i, p := range phases {
		ts := wsync.TaskState{ID: "t", Type: types[i%len(types)], SyncPhase: v1alpha1.SyncPhaseSync, Wave: i, Group: "apps", Version: "v1",
			Kind: "Deployment", Namespace: "web", Name: "web", Phase: p, Result: v1alpha1.ResultCodeSynced, Message: "m",
			StartedAt: start, FinishedAt: start.Add(time.Second)}
		st.Tasks = append(st.Tasks, ts)
		want = append(want, ts)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	got := ProgressOf(&v1alpha1.OperationState{WavecdState: &apiextensionsv1.JSON{Raw: raw}})
	wantProgress := &SyncProgress{SyncPhase: "PostSync", Wave: 2, Stalled: "pods cannot be scheduled", Tasks: want}
	if diff := cmp.Diff(wantProgress, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if step := got.Step(); step != "PostSync wave 2" {
		t.Errorf("Step() = %q, want %q", step, "PostSync wave 2")
	}
}

func TestProgressOfNothing(t *testing.T) {
	for name, op := range map[string]*v1alpha1.OperationState{
		"no operation":   nil,
		"no state":       {},
		"a broken state": {WavecdState: &apiextensionsv1.JSON{Raw: []byte("{")}},
	} {
		if p := ProgressOf(op); p != nil || p.Step() != "" {
			t.Errorf("%s: ProgressOf = %+v, step %q, want nil", name, p, p.Step())
		}
	}
	main := &SyncProgress{SyncPhase: v1alpha1.SyncPhaseSync, Wave: 3}
	if got := main.Step(); got != "wave 3" {
		t.Errorf("Step() of the main phase = %q, want %q", got, "wave 3")
	}
}
