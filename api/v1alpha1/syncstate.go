package v1alpha1

import "time"

// The vocabulary of a sync's progress, as wavecd records it in
// status.operationState.wavecdState (not an Argo CD field): the phases a
// sync runs, what each of its tasks does and how far it has come. The
// sync engine writes it; the API server, the UI and rehearsals read it.

// SyncPhase is a phase of a sync: hooks of PreSync, then the objects
// (Sync), then PostSync hooks; SyncFail hooks run when the sync failed.
type SyncPhase string

// The sync phases, in the order they run.
const (
	SyncPhasePreSync  SyncPhase = "PreSync"
	SyncPhaseSync     SyncPhase = "Sync"
	SyncPhasePostSync SyncPhase = "PostSync"
	SyncPhaseSyncFail SyncPhase = "SyncFail"
)

// TaskType is what a task of a sync does.
type TaskType string

// The task types.
const (
	// TaskApply writes a desired object.
	TaskApply TaskType = "apply"
	// TaskPrune deletes a live object that left the desired state.
	TaskPrune TaskType = "prune"
	// TaskHook creates a hook and waits for its result.
	TaskHook TaskType = "hook"
	// TaskNamespace creates the destination namespace (CreateNamespace).
	TaskNamespace TaskType = "namespace"
)

// TaskPhase is how far one task of a sync has come.
type TaskPhase string

// The task phases.
const (
	// TaskPending: nothing done yet.
	TaskPending TaskPhase = "pending"
	// TaskDryRunOK: the dry run passed (or was skipped with a reason).
	TaskDryRunOK TaskPhase = "dry-run-ok"
	// TaskSkipped: left out (already in sync with ApplyOutOfSyncOnly, or no
	// longer in the desired state on resume).
	TaskSkipped TaskPhase = "skipped"
	// TaskApplied: the object was written; its health is awaited.
	TaskApplied TaskPhase = "applied"
	// TaskRunning: a hook was created and has not completed, or a pruned
	// object is being deleted.
	TaskRunning TaskPhase = "running"
	// TaskSucceeded: healthy, hook succeeded, or prune skipped.
	TaskSucceeded TaskPhase = "succeeded"
	// TaskFailed: the task failed; its message says why.
	TaskFailed TaskPhase = "failed"
	// TaskPruned: the object was deleted and is gone.
	TaskPruned TaskPhase = "pruned"
)

// Terminal reports whether nothing more happens to a task in this phase.
func (p TaskPhase) Terminal() bool {
	switch p {
	case TaskSkipped, TaskSucceeded, TaskFailed, TaskPruned:
		return true
	default: // pending, dry-run, applied and running tasks go on
	}
	return false
}

// SyncTask is the saved state of one task of a sync (an object, hook or
// namespace): what it is, how far it has come and when it ran. The sync
// engine writes it; the API server, the UI and rehearsals read it. It is
// stored compressed inside the operation state, not as an API field, so it
// has no generated deep copy.
// +kubebuilder:object:generate=false
type SyncTask struct {
	ID        string    `json:"id"`
	Type      TaskType  `json:"type"`
	SyncPhase SyncPhase `json:"syncPhase"`
	Wave      int       `json:"wave"`
	Group     string    `json:"group,omitempty"`
	Version   string    `json:"version"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	// Name is the object's name; for a hook with a generateName, the name
	// generated once when the sync started.
	Name    string     `json:"name"`
	Phase   TaskPhase  `json:"phase"`
	Result  ResultCode `json:"result,omitempty"`
	Message string     `json:"message,omitempty"`
	// DryRunAtWave marks a custom resource whose CRD this sync applies in
	// an earlier step: its dry run waits for its own step.
	DryRunAtWave bool `json:"dryRunAtWave,omitempty"`
	// StartedAt is when the task ran (object applied, hook created, prune
	// issued) and FinishedAt when it ended (Healthy, hook done, pruned,
	// failed), to the millisecond, for timelines. They ride along with the
	// writes a sync makes anyway.
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}
