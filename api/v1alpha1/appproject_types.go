package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppProjectKind is the kind of an AppProject.
const AppProjectKind = "AppProject"

// AppProject groups apps and limits what they may deploy where.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=appprojects,shortName=appproj;appprojs,categories=argocd
type AppProject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              AppProjectSpec   `json:"spec"`
	Status            AppProjectStatus `json:"status,omitempty"`
}

// AppProjectList is a list of AppProjects.
// +kubebuilder:object:root=true
type AppProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []AppProject `json:"items"`
}

// AppProjectSpec holds the project's limits.
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectSpec struct {
	SourceRepos                     []string                          `json:"sourceRepos,omitempty"`
	Destinations                    []ApplicationDestination          `json:"destinations,omitempty"`
	Description                     string                            `json:"description,omitempty"`
	Roles                           []ProjectRole                     `json:"roles,omitempty"`
	ClusterResourceWhitelist        []ClusterResourceRestriction      `json:"clusterResourceWhitelist,omitempty"`
	NamespaceResourceBlacklist      []metav1.GroupKind                `json:"namespaceResourceBlacklist,omitempty"`
	OrphanedResources               *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	SyncWindows                     SyncWindows                       `json:"syncWindows,omitempty"`
	NamespaceResourceWhitelist      []metav1.GroupKind                `json:"namespaceResourceWhitelist,omitempty"`
	ClusterResourceBlacklist        []ClusterResourceRestriction      `json:"clusterResourceBlacklist,omitempty"`
	SourceNamespaces                []string                          `json:"sourceNamespaces,omitempty"`
	PermitOnlyProjectScopedClusters bool                              `json:"permitOnlyProjectScopedClusters,omitempty"`
	// DestinationServiceAccounts are the service accounts a sync to a
	// matching destination writes as, when argocd-cm's
	// application.sync.impersonation.enabled is "true"; the first match
	// wins.
	DestinationServiceAccounts []ApplicationDestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
	// SignatureKeys, when set, are the only OpenPGP keys (IDs of keys in
	// argocd-gpg-keys-cm) whose signature makes a commit of a Git source
	// renderable.
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
}

// SignatureKey is the ID of an OpenPGP key: 16 hexadecimal digits.
type SignatureKey struct {
	KeyID string `json:"keyID"`
}

// ApplicationDestinationServiceAccount maps destinations (server and
// namespace globs) to the service account their syncs run as:
// "name" (in the destination namespace) or "namespace:name".
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestinationServiceAccount struct {
	Server                string `json:"server"`
	Namespace             string `json:"namespace,omitempty"`
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// ClusterResourceRestriction names a cluster-scoped group and kind; Name,
// when set, narrows it to objects of that name (a glob).
// +kubebuilder:pruning:PreserveUnknownFields
type ClusterResourceRestriction struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name,omitempty"`
}

// ProjectRole is a named set of policies and tokens.
// +kubebuilder:pruning:PreserveUnknownFields
type ProjectRole struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Policies    []string `json:"policies,omitempty"`
	Groups      []string `json:"groups,omitempty"`
}

// OrphanedResourcesMonitorSettings turns on orphaned-object warnings.
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourcesMonitorSettings struct {
	Warn   *bool                 `json:"warn,omitempty"`
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey excludes objects from orphan warnings.
// +kubebuilder:pruning:PreserveUnknownFields
type OrphanedResourceKey struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Name  string `json:"name,omitempty"`
}

// SyncWindows is a project's list of sync windows.
type SyncWindows []*SyncWindow

// SyncWindow allows or denies syncs on a cron schedule.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncWindow struct {
	Kind           string   `json:"kind,omitempty"`
	Schedule       string   `json:"schedule,omitempty"`
	Duration       string   `json:"duration,omitempty"`
	Applications   []string `json:"applications,omitempty"`
	Namespaces     []string `json:"namespaces,omitempty"`
	Clusters       []string `json:"clusters,omitempty"`
	ManualSync     bool     `json:"manualSync,omitempty"`
	TimeZone       string   `json:"timeZone,omitempty"`
	UseAndOperator bool     `json:"andOperator,omitempty"`
	Description    string   `json:"description,omitempty"`
}

// AppProjectStatus holds the project's token state.
// +kubebuilder:pruning:PreserveUnknownFields
type AppProjectStatus struct {
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}

// JWTTokens lists a role's tokens.
// +kubebuilder:pruning:PreserveUnknownFields
type JWTTokens struct {
	Items []JWTToken `json:"items,omitempty"`
}

// JWTToken is one issued token.
// +kubebuilder:pruning:PreserveUnknownFields
type JWTToken struct {
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp,omitempty"`
	ID        string `json:"id,omitempty"`
}
