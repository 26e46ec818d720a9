package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SourceHydrator is Argo CD's source hydrator: the dry source rendered
// and committed to a branch (hydrateTo, else the sync source's), and the
// app synced from the sync source.
// +kubebuilder:pruning:PreserveUnknownFields
type SourceHydrator struct {
	DrySource  DrySource  `json:"drySource"`
	SyncSource SyncSource `json:"syncSource"`
	HydrateTo  *HydrateTo `json:"hydrateTo,omitempty"`
}

// DrySource is where a hydrator reads its sources.
// +kubebuilder:pruning:PreserveUnknownFields
type DrySource struct {
	RepoURL        string                      `json:"repoURL"`
	TargetRevision string                      `json:"targetRevision"`
	Path           string                      `json:"path"`
	Helm           *ApplicationSourceHelm      `json:"helm,omitempty"`
	Kustomize      *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	Directory      *ApplicationSourceDirectory `json:"directory,omitempty"`
	Plugin         *ApplicationSourcePlugin    `json:"plugin,omitempty"`
}

// SyncSource is where hydrated manifests are synced from.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncSource struct {
	TargetBranch string `json:"targetBranch"`
	Path         string `json:"path"`
	RepoURL      string `json:"repoURL,omitempty"`
}

// HydrateTo is a staging branch for hydrated manifests.
// +kubebuilder:pruning:PreserveUnknownFields
type HydrateTo struct {
	TargetBranch string `json:"targetBranch"`
}

// AnnotationHydrate asks for a hydration now: "normal", or "hard" to
// hydrate even when nothing changed.
const AnnotationHydrate = "argocd.argoproj.io/hydrate"

// HydrateOperationPhase is where a hydration is.
type HydrateOperationPhase string

// Hydration phases, Argo CD's.
const (
	HydrateOperationPhaseHydrating HydrateOperationPhase = "Hydrating"
	HydrateOperationPhaseFailed    HydrateOperationPhase = "Failed"
	HydrateOperationPhaseHydrated  HydrateOperationPhase = "Hydrated"
)

// SourceHydratorStatus is what the hydrator last did for an app.
type SourceHydratorStatus struct {
	LastSuccessfulOperation *SuccessfulHydrateOperation `json:"lastSuccessfulOperation,omitempty"`
	CurrentOperation        *HydrateOperation           `json:"currentOperation,omitempty"`
	// LastComparedDryRevision is the dry commit last resolved.
	LastComparedDryRevision string `json:"lastComparedDryRevision,omitempty"`
}

// HydrateOperation is the latest hydration.
type HydrateOperation struct {
	StartedAt   metav1.Time           `json:"startedAt,omitempty"`
	FinishedAt  *metav1.Time          `json:"finishedAt,omitempty"`
	Phase       HydrateOperationPhase `json:"phase"`
	Message     string                `json:"message"`
	DrySHA      string                `json:"drySHA,omitempty"`
	HydratedSHA string                `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec hydrated (its schema left open).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}

// SuccessfulHydrateOperation is the latest hydration that succeeded.
type SuccessfulHydrateOperation struct {
	DrySHA      string `json:"drySHA,omitempty"`
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec hydrated (its schema left open).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}
