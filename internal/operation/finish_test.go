package operation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

func TestHistoryLimit(t *testing.T) {
	five := int64(5)
	tests := map[string]struct {
		limit   *int64
		syncs   int
		wantIDs []int64
	}{
		"fewer than the default limit": {syncs: 3, wantIDs: []int64{0, 1, 2}},
		"the default limit is 10":      {syncs: 12, wantIDs: []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		"revisionHistoryLimit":         {limit: &five, syncs: 7, wantIDs: []int64{2, 3, 4, 5, 6}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
				RevisionHistoryLimit: tc.limit, Source: &v1alpha1.ApplicationSource{RepoURL: "r", TargetRevision: "main"},
			}}
			now := metav1.Now()
			op := &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}, FinishedAt: &now}
			for range tc.syncs {
				addHistory(app, op, "abc")
			}
			var ids []int64
			for _, e := range app.Status.History {
				ids = append(ids, e.ID)
			}
			if d := cmp.Diff(tc.wantIDs, ids); d != "" {
				t.Errorf("history IDs (-want +got):\n%s", d)
			}
		})
	}
}

func TestRecordsHistory(t *testing.T) {
	some := []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "hello"}}
	tests := map[string]struct {
		phase      v1alpha1.OperationPhase
		sync       v1alpha1.SyncOperation
		superseded bool
		want       bool
	}{
		"a successful sync":                   {phase: v1alpha1.OperationSucceeded, want: true},
		"a failed sync":                       {phase: v1alpha1.OperationFailed},
		"a superseded sync":                   {phase: v1alpha1.OperationFailed, superseded: true, want: true},
		"a dry run":                           {phase: v1alpha1.OperationSucceeded, sync: v1alpha1.SyncOperation{DryRun: true}},
		"a sync of some resources":            {phase: v1alpha1.OperationSucceeded, sync: v1alpha1.SyncOperation{Resources: some}},
		"a superseded sync of some resources": {phase: v1alpha1.OperationFailed, sync: v1alpha1.SyncOperation{Resources: some}, superseded: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			op := &v1alpha1.OperationState{Phase: tc.phase, Operation: v1alpha1.Operation{Sync: &tc.sync}}
			if got := recordsHistory(op, tc.superseded); got != tc.want {
				t.Errorf("recordsHistory = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestArgoCDCRDWritesNoExtras: on Argo CD's Application CRD, which would
// drop them with a warning on every write, a sync's results carry no
// per-resource times and its progress no resumable state.
func TestArgoCDCRDWritesNoExtras(t *testing.T) {
	now := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	st := &wsync.State{Tasks: []wsync.TaskState{{Kind: "ConfigMap", Name: "hello", Phase: v1alpha1.TaskSucceeded,
		Result: v1alpha1.ResultCodeSynced, StartedAt: now, FinishedAt: now.Add(time.Second)}}}
	app := &v1alpha1.Application{}
	for _, argoCRD := range []bool{false, true} {
		rn := &Runner{ArgoCDCRD: argoCRD}
		res := rn.syncResult(st, "abc", app)
		if len(res.Resources) != 1 {
			t.Fatalf("ArgoCDCRD %v: results %+v", argoCRD, res.Resources)
		}
		if hasTimes := res.Resources[0].StartedAt != nil && res.Resources[0].FinishedAt != nil; hasTimes == argoCRD {
			t.Errorf("ArgoCDCRD %v: resource times %v, %v", argoCRD, res.Resources[0].StartedAt, res.Resources[0].FinishedAt)
		}
	}
}
