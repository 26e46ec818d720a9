package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncStatusCode is an app's or object's sync status.
type SyncStatusCode string

// Sync statuses.
const (
	SyncStatusCodeUnknown   SyncStatusCode = "Unknown"
	SyncStatusCodeSynced    SyncStatusCode = "Synced"
	SyncStatusCodeOutOfSync SyncStatusCode = "OutOfSync"
)

// HealthStatusCode is a health status; the values are those of the health
// package (Healthy, Progressing, Degraded, Suspended, Missing, Unknown).
type HealthStatusCode string

// ApplicationStatus is what the controller observed and did.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationStatus struct {
	Resources      []ResourceStatus       `json:"resources,omitempty"`
	Sync           SyncStatus             `json:"sync,omitempty"`
	Health         AppHealthStatus        `json:"health,omitempty"`
	History        RevisionHistories      `json:"history,omitempty"`
	Conditions     []ApplicationCondition `json:"conditions,omitempty"`
	ReconciledAt   *metav1.Time           `json:"reconciledAt,omitempty"`
	OperationState *OperationState        `json:"operationState,omitempty"`
	ObservedAt     *metav1.Time           `json:"observedAt,omitempty"`
	SourceType     string                 `json:"sourceType,omitempty"`
	SourceTypes    []string               `json:"sourceTypes,omitempty"`
	Summary        ApplicationSummary     `json:"summary,omitempty"`
	// ResourceHealthSource is "appTree" when object health lives in a
	// separate tree; wavecd always keeps it inline and leaves this empty.
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
	ControllerNamespace  string `json:"controllerNamespace,omitempty"`
	// SourceHydrator is what the hydrator last did (spec.sourceHydrator).
	SourceHydrator *SourceHydratorStatus `json:"sourceHydrator,omitempty"`
}

// ResourceStatus is one managed object as the app status lists it.
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceStatus struct {
	Group                        string         `json:"group,omitempty"`
	Version                      string         `json:"version,omitempty"`
	Kind                         string         `json:"kind,omitempty"`
	Namespace                    string         `json:"namespace,omitempty"`
	Name                         string         `json:"name,omitempty"`
	Status                       SyncStatusCode `json:"status,omitempty"`
	Health                       *HealthStatus  `json:"health,omitempty"`
	Hook                         bool           `json:"hook,omitempty"`
	RequiresPruning              bool           `json:"requiresPruning,omitempty"`
	SyncWave                     int64          `json:"syncWave,omitempty"`
	RequiresDeletionConfirmation bool           `json:"requiresDeletionConfirmation,omitempty"`
}

// HealthStatus is an object's health.
// +kubebuilder:pruning:PreserveUnknownFields
type HealthStatus struct {
	Status  HealthStatusCode `json:"status,omitempty"`
	Message string           `json:"message,omitempty"`
	// LastTransitionTime is deprecated upstream but still read by tools.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// AppHealthStatus is the app's aggregated health.
// +kubebuilder:pruning:PreserveUnknownFields
type AppHealthStatus struct {
	Status             HealthStatusCode `json:"status,omitempty"`
	Message            string           `json:"message,omitempty"`
	LastTransitionTime *metav1.Time     `json:"lastTransitionTime,omitempty"`
}

// SyncStatus compares the live state with the target revision.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncStatus struct {
	Status     SyncStatusCode `json:"status"`
	ComparedTo ComparedTo     `json:"comparedTo,omitempty"`
	Revision   string         `json:"revision,omitempty"`
	Revisions  []string       `json:"revisions,omitempty"`
}

// ComparedTo is the spec the last comparison used.
// +kubebuilder:pruning:PreserveUnknownFields
type ComparedTo struct {
	Source            ApplicationSource           `json:"source,omitempty"`
	Destination       ApplicationDestination      `json:"destination"`
	Sources           ApplicationSources          `json:"sources,omitempty"`
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// ApplicationConditionType names a condition.
type ApplicationConditionType = string

// Condition types Argo CD users know.
const (
	ApplicationConditionDeletionError           = "DeletionError"
	ApplicationConditionInvalidSpecError        = "InvalidSpecError"
	ApplicationConditionComparisonError         = "ComparisonError"
	ApplicationConditionSyncError               = "SyncError"
	ApplicationConditionUnknownError            = "UnknownError"
	ApplicationConditionSharedResourceWarning   = "SharedResourceWarning"
	ApplicationConditionRepeatedResourceWarning = "RepeatedResourceWarning"
	ApplicationConditionExcludedResourceWarning = "ExcludedResourceWarning"
	ApplicationConditionOrphanedResourceWarning = "OrphanedResourceWarning"
	// ApplicationConditionUnsupportedFieldWarning is wavecd's: the spec
	// sets a field Argo CD honours that wavecd does not implement.
	ApplicationConditionUnsupportedFieldWarning = "UnsupportedFieldWarning"
	// ApplicationConditionRenderWarning is wavecd's: what a render
	// skipped on purpose (files that parse but hold no Kubernetes object,
	// symlinks not followed), so that no skip goes unseen.
	ApplicationConditionRenderWarning = "RenderWarning"
	// ApplicationConditionDependencyWait is wavecd's: a depends-on app is
	// not yet Synced and Healthy, or the dependencies form a cycle.
	ApplicationConditionDependencyWait = "DependencyWait"
	// ApplicationConditionSyncStalled is wavecd's: a running sync's wave
	// made no progress for the stall timeout while pods it waits on cannot
	// be scheduled; the message says which and why.
	ApplicationConditionSyncStalled = "SyncStalled"
	// ApplicationConditionDeletionWait is wavecd's: the step of an app's
	// teardown in progress and the objects it waits on, with their
	// finalizers and who clears them.
	ApplicationConditionDeletionWait = "DeletionWait"
	// ApplicationConditionDeletionStalled is wavecd's: a teardown step
	// made no progress for the stall timeout; the message says which
	// objects hold it, by which finalizer, and who would clear it.
	ApplicationConditionDeletionStalled = "DeletionStalled"
	// ApplicationConditionStatusTruncated is wavecd's: the app manages
	// more objects than its status can list within etcd's size limit;
	// the message says how many of each list it shows.
	ApplicationConditionStatusTruncated = "StatusTruncatedWarning"
)

// ApplicationCondition is a problem or warning about the app.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationCondition struct {
	Type               ApplicationConditionType `json:"type"`
	Message            string                   `json:"message"`
	LastTransitionTime *metav1.Time             `json:"lastTransitionTime,omitempty"`
}

// RevisionHistory is one deployment of the app.
// +kubebuilder:pruning:PreserveUnknownFields
type RevisionHistory struct {
	Revision        string             `json:"revision,omitempty"`
	DeployedAt      metav1.Time        `json:"deployedAt"`
	ID              int64              `json:"id"`
	Source          ApplicationSource  `json:"source,omitempty"`
	DeployStartedAt *metav1.Time       `json:"deployStartedAt,omitempty"`
	Sources         ApplicationSources `json:"sources,omitempty"`
	Revisions       []string           `json:"revisions,omitempty"`
	InitiatedBy     OperationInitiator `json:"initiatedBy,omitempty"`
}

// RevisionHistories is the deployment history, oldest first.
type RevisionHistories []RevisionHistory

// ApplicationSummary lists facts shown in UIs.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSummary struct {
	ExternalURLs []string `json:"externalURLs,omitempty"`
	Images       []string `json:"images,omitempty"`
}
