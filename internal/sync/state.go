package sync

import (
	"slices"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TaskState is the saved state of one task; the API declares it, so the
// readers of a sync's progress read the same record.
type TaskState = v1alpha1.SyncTask

// State is the saved state of a sync: enough to resume it after a restart
// without running a finished hook again or skipping one. It encodes to JSON.
type State struct {
	// ID identifies this sync; hooks it creates carry it.
	ID         string                  `json:"id"`
	Phase      v1alpha1.OperationPhase `json:"phase"`
	Message    string                  `json:"message,omitempty"`
	StartedAt  time.Time               `json:"startedAt"`
	FinishedAt *time.Time              `json:"finishedAt,omitempty"`
	// v1alpha1.SyncPhase and Wave are the step being worked on.
	SyncPhase v1alpha1.SyncPhase `json:"syncPhase,omitempty"`
	Wave      int                `json:"wave"`
	// DryRunDone is set once every task passed its dry run.
	DryRunDone bool `json:"dryRunDone,omitempty"`
	// Failure is set when the sync failed; SyncFail hooks then run.
	Failure string `json:"failure,omitempty"`
	// Stalled says why the current step is stalled: it made no progress
	// for the stall timeout and pods it waits on cannot be scheduled.
	Stalled string      `json:"stalled,omitempty"`
	Tasks   []TaskState `json:"tasks"`
}

// stamp records the start and end of the tasks that started or ended
// since the last call.
func (s *State) stamp(now time.Time) {
	now = now.UTC().Truncate(time.Millisecond)
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Phase == v1alpha1.TaskSkipped {
			continue
		}
		if t.StartedAt.IsZero() && started(t.Phase) {
			t.StartedAt = now
		}
		if t.FinishedAt.IsZero() && t.Phase.Terminal() {
			t.FinishedAt = now
		}
	}
}

// DeepCopy returns a copy of s that shares nothing with it.
func (s *State) DeepCopy() *State {
	out := *s
	out.Tasks = slices.Clone(s.Tasks)
	if s.FinishedAt != nil {
		t := *s.FinishedAt
		out.FinishedAt = &t
	}
	return &out
}

// ResourceResult is the result of one object, modeled on Argo CD's
// ResourceResult.
type ResourceResult struct {
	Group     string                  `json:"group"`
	Version   string                  `json:"version"`
	Kind      string                  `json:"kind"`
	Namespace string                  `json:"namespace"`
	Name      string                  `json:"name"`
	Status    v1alpha1.ResultCode     `json:"status,omitempty"`
	Message   string                  `json:"message,omitempty"`
	HookType  string                  `json:"hookType,omitempty"`
	HookPhase v1alpha1.OperationPhase `json:"hookPhase,omitempty"`
	SyncPhase v1alpha1.SyncPhase      `json:"syncPhase,omitempty"`
	// StartedAt and FinishedAt are the task's (TaskState).
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// Result is the outcome of a sync so far.
type Result struct {
	Phase     v1alpha1.OperationPhase `json:"phase"`
	Message   string                  `json:"message,omitempty"`
	Resources []ResourceResult        `json:"resources,omitempty"`
}

// Result returns the per-object results of the tasks that did something,
// in execution order.
func (s *State) Result() Result {
	out := Result{Phase: s.Phase, Message: s.Message}
	for _, t := range s.Tasks {
		if t.Phase == v1alpha1.TaskSkipped || (t.Result == "" && !t.Phase.Terminal() && t.Phase != v1alpha1.TaskRunning) {
			continue
		}
		r := ResourceResult{
			Group: t.Group, Version: t.Version, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name,
			Status: t.Result, Message: t.Message, SyncPhase: t.SyncPhase, HookPhase: hookPhase(t.Phase),
			StartedAt: t.StartedAt, FinishedAt: t.FinishedAt,
		}
		if t.Type == v1alpha1.TaskHook {
			r.HookType = string(t.SyncPhase)
		}
		out.Resources = append(out.Resources, r)
	}
	return out
}

func hookPhase(p v1alpha1.TaskPhase) v1alpha1.OperationPhase {
	switch p {
	case v1alpha1.TaskApplied, v1alpha1.TaskRunning:
		return v1alpha1.OperationRunning
	case v1alpha1.TaskFailed:
		return v1alpha1.OperationFailed
	case v1alpha1.TaskSucceeded, v1alpha1.TaskPruned:
		return v1alpha1.OperationSucceeded
	default: // no hook phase yet
	}
	return ""
}
