package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperationPhase is the phase of a sync operation.
type OperationPhase string

// Operation phases.
const (
	OperationRunning     OperationPhase = "Running"
	OperationTerminating OperationPhase = "Terminating"
	OperationFailed      OperationPhase = "Failed"
	OperationError       OperationPhase = "Error"
	OperationSucceeded   OperationPhase = "Succeeded"
)

// Completed reports whether the phase is final.
func (p OperationPhase) Completed() bool {
	return p == OperationFailed || p == OperationError || p == OperationSucceeded
}

// Operation is a requested sync, written to the app's top-level
// `operation` field by a user, the CLI or automated sync.
// +kubebuilder:pruning:PreserveUnknownFields
type Operation struct {
	Sync        *SyncOperation     `json:"sync,omitempty"`
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	Info        []*Info            `json:"info,omitempty"`
	Retry       RetryStrategy      `json:"retry,omitempty"`
}

// Info is a name/value pair shown with an operation.
// +kubebuilder:pruning:PreserveUnknownFields
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// OperationInitiator says who started an operation.
// +kubebuilder:pruning:PreserveUnknownFields
type OperationInitiator struct {
	Username  string `json:"username,omitempty"`
	Automated bool   `json:"automated,omitempty"`
}

// SyncOperation holds the options of one sync.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperation struct {
	Revision              string                  `json:"revision,omitempty"`
	Prune                 bool                    `json:"prune,omitempty"`
	DryRun                bool                    `json:"dryRun,omitempty"`
	SyncStrategy          *SyncStrategy           `json:"syncStrategy,omitempty"`
	Resources             []SyncOperationResource `json:"resources,omitempty"`
	Source                *ApplicationSource      `json:"source,omitempty"`
	Manifests             []string                `json:"manifests,omitempty"`
	SyncOptions           SyncOptions             `json:"syncOptions,omitempty"`
	Sources               ApplicationSources      `json:"sources,omitempty"`
	Revisions             []string                `json:"revisions,omitempty"`
	AutoHealAttemptsCount int64                   `json:"autoHealAttemptsCount,omitempty"`
}

// SyncOperationResource selects one object for a partial sync.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResource struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// SyncStrategy chooses apply or hook strategy, with force.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategy struct {
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	Hook  *SyncStrategyHook  `json:"hook,omitempty"`
}

// SyncStrategyApply applies without hooks.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyApply struct {
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook applies with hooks (the default).
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStrategyHook struct {
	SyncStrategyApply `json:",inline"`
}

// OperationState is the progress and result of the current or last
// operation.
// +kubebuilder:pruning:PreserveUnknownFields
type OperationState struct {
	Operation  Operation            `json:"operation"`
	Phase      OperationPhase       `json:"phase"`
	Message    string               `json:"message,omitempty"`
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  metav1.Time          `json:"startedAt"`
	FinishedAt *metav1.Time         `json:"finishedAt,omitempty"`
	RetryCount int64                `json:"retryCount,omitempty"`
	// WavecdState is wavecd's resumable sync state (not an Argo CD field):
	// a restarted controller continues the sync from it.
	WavecdState *apiextensionsv1.JSON `json:"wavecdState,omitempty"`
}

// SyncOperationResult is the result of a sync.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncOperationResult struct {
	Resources ResourceResults    `json:"resources,omitempty"`
	Revision  string             `json:"revision"`
	Source    ApplicationSource  `json:"source,omitempty"`
	Sources   ApplicationSources `json:"sources,omitempty"`
	Revisions []string           `json:"revisions,omitempty"`
}

// ResultCode is one object's sync result.
type ResultCode string

// Result codes.
const (
	ResultCodeSynced       ResultCode = "Synced"
	ResultCodeSyncFailed   ResultCode = "SyncFailed"
	ResultCodePruned       ResultCode = "Pruned"
	ResultCodePruneSkipped ResultCode = "PruneSkipped"
)

// ResourceResult is what a sync did to one object.
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceResult struct {
	Group     string     `json:"group"`
	Version   string     `json:"version"`
	Kind      string     `json:"kind"`
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Status    ResultCode `json:"status,omitempty"`
	Message   string     `json:"message,omitempty"`
	HookType  string     `json:"hookType,omitempty"`
	HookPhase string     `json:"hookPhase,omitempty"`
	SyncPhase string     `json:"syncPhase,omitempty"`
	Images    []string   `json:"images,omitempty"`
	// StartedAt is when the sync applied the object, created the hook or
	// issued the prune (a wavecd field, for the sync timeline).
	StartedAt *metav1.MicroTime `json:"startedAt,omitempty"`
	// FinishedAt is when the object turned Healthy, the hook ended or the
	// pruned object was gone (a wavecd field, for the sync timeline).
	FinishedAt *metav1.MicroTime `json:"finishedAt,omitempty"`
}

// ResourceResults is a list of object results.
type ResourceResults []*ResourceResult
