package v1alpha1

import (
	"cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Group and Version of the Argo CD API.
const (
	Group   = "argoproj.io"
	Version = "v1alpha1"
	// ApplicationKind is the kind of an Application.
	ApplicationKind = "Application"
)

// Application is a group of Kubernetes objects rendered from one or more
// sources and deployed to one destination.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applications,shortName=app;apps,categories=argocd
// +kubebuilder:printcolumn:name="Sync Status",type=string,JSONPath=`.status.sync.status`
// +kubebuilder:printcolumn:name="Health Status",type=string,JSONPath=`.status.health.status`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.sync.revision`,priority=10
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`,priority=10
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSpec   `json:"spec"`
	Status            ApplicationStatus `json:"status,omitempty"`
	Operation         *Operation        `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications.
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Application `json:"items"`
}

// ApplicationSpec is the desired state of an Application.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSpec struct {
	// Source is the single source of the app; Sources replaces it when set.
	Source *ApplicationSource `json:"source,omitempty"`
	// Destination is the cluster and namespace the app deploys to.
	Destination ApplicationDestination `json:"destination"`
	// Project is the AppProject the app belongs to.
	Project string `json:"project"`
	// Sources is the list of sources of a multi-source app.
	Sources ApplicationSources `json:"sources,omitempty"`
	// SyncPolicy controls automated sync, options and retries.
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences masks fields out of the comparison.
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// Info holds name/value pairs shown with the app.
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit caps status.history (default 10).
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// SourceHydrator is Argo CD's source hydrator: the controller renders
	// the dry source into a branch and syncs the sync source.
	// Its schema is left open to keep the CRD small.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	SourceHydrator *SourceHydrator `json:"sourceHydrator,omitempty"`
}

// HasMultipleSources reports whether the app uses spec.sources.
func (s *ApplicationSpec) HasMultipleSources() bool {
	return s.SourceHydrator == nil && len(s.Sources) > 0
}

// GetSources returns spec.sources, or spec.source as a one-element list;
// with a source hydrator, its sync source, as Argo CD does.
func (s *ApplicationSpec) GetSources() ApplicationSources {
	if h := s.SourceHydrator; h != nil {
		return ApplicationSources{{RepoURL: cmp.Or(h.SyncSource.RepoURL, h.DrySource.RepoURL), Path: h.SyncSource.Path, TargetRevision: h.SyncSource.TargetBranch}}
	}
	if s.HasMultipleSources() {
		return s.Sources
	}
	if s.Source != nil {
		return ApplicationSources{*s.Source}
	}
	return nil
}

// ApplicationSources is the list of sources of a multi-source app.
type ApplicationSources []ApplicationSource

// ApplicationSource is where an app's manifests come from: a path in a Git
// repository, or a chart in a Helm repository.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSource struct {
	// RepoURL is the URL of the Git or Helm repository.
	RepoURL string `json:"repoURL"`
	// Path is a directory in a Git repository.
	Path string `json:"path,omitempty"`
	// TargetRevision is a branch, tag or commit (Git) or a semver
	// constraint on the chart version (Helm). Empty means HEAD.
	TargetRevision string `json:"targetRevision,omitempty"`
	// Helm holds Helm options.
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize holds Kustomize options.
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory holds options for plain manifest folders.
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Chart is a chart name in a Helm repository.
	Chart string `json:"chart,omitempty"`
	// Ref names this source so others can read its files as $ref/path.
	Ref string `json:"ref,omitempty"`
	// Name is a human-readable name of the source.
	Name string `json:"name,omitempty"`
	// Plugin renders the source with a Config Management Plugin.
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
	// TagPrefix filters Git tags before a semver targetRevision is
	// resolved (not implemented by wavecd: a warning condition says so).
	TagPrefix string `json:"tagPrefix,omitempty"`
}

// ApplicationSourceHelm holds Helm options of a source.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceHelm struct {
	// ValueFiles are values files in the repository, relative to the chart.
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters are --set (or --set-string) values.
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// ReleaseName defaults to the application name.
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is an inline values YAML document.
	Values string `json:"values,omitempty" patchStrategy:"replace"`
	// FileParameters are --set-file values.
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// Version is the Helm major version (only v3 semantics exist).
	Version string `json:"version,omitempty"`
	// PassCredentials passes repository credentials to all domains.
	PassCredentials bool `json:"passCredentials,omitempty"`
	// IgnoreMissingValueFiles skips value files that do not exist.
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds leaves the chart's crds/ folder out.
	SkipCrds bool `json:"skipCrds,omitempty"`
	// ValuesObject is inline values as an object; it wins over Values.
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// Namespace overrides the destination namespace for templating.
	Namespace string `json:"namespace,omitempty"`
	// KubeVersion overrides the cluster version for Capabilities.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions overrides the cluster API versions for Capabilities.
	APIVersions []string `json:"apiVersions,omitempty"`
	// SkipTests leaves test hooks out.
	SkipTests bool `json:"skipTests,omitempty"`
	// SkipSchemaValidation skips values.schema.json validation.
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
}

// HelmParameter is one --set value.
// +kubebuilder:pruning:PreserveUnknownFields
type HelmParameter struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	// ForceString makes the value a string (--set-string).
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter is one --set-file value.
// +kubebuilder:pruning:PreserveUnknownFields
type HelmFileParameter struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// KustomizeImage is an image override: [old_image_name=]<image_name>:<image_tag>.
type KustomizeImage string

// KustomizeImages is a list of image overrides.
type KustomizeImages []KustomizeImage

// ApplicationSourceKustomize holds Kustomize options of a source.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceKustomize struct {
	NamePrefix                string            `json:"namePrefix,omitempty"`
	NameSuffix                string            `json:"nameSuffix,omitempty"`
	Images                    KustomizeImages   `json:"images,omitempty"`
	CommonLabels              map[string]string `json:"commonLabels,omitempty"`
	Version                   string            `json:"version,omitempty"`
	CommonAnnotations         map[string]string `json:"commonAnnotations,omitempty"`
	ForceCommonLabels         bool              `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations    bool              `json:"forceCommonAnnotations,omitempty"`
	Namespace                 string            `json:"namespace,omitempty"`
	CommonAnnotationsEnvsubst bool              `json:"commonAnnotationsEnvsubst,omitempty"`
	Replicas                  KustomizeReplicas `json:"replicas,omitempty"`
	Patches                   KustomizePatches  `json:"patches,omitempty"`
	Components                []string          `json:"components,omitempty"`
	IgnoreMissingComponents   bool              `json:"ignoreMissingComponents,omitempty"`
	LabelWithoutSelector      bool              `json:"labelWithoutSelector,omitempty"`
	KubeVersion               string            `json:"kubeVersion,omitempty"`
	APIVersions               []string          `json:"apiVersions,omitempty"`
	LabelIncludeTemplates     bool              `json:"labelIncludeTemplates,omitempty"`
}

// KustomizeReplica overrides the replicas of a Deployment or StatefulSet.
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizeReplicas is a list of replica overrides.
type KustomizeReplicas []KustomizeReplica

// KustomizePatches is a list of patches.
type KustomizePatches []KustomizePatch

// KustomizePatch is an inline or in-repo patch with an optional target.
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizePatch struct {
	Path    string             `json:"path,omitempty" yaml:"path,omitempty"`
	Patch   string             `json:"patch,omitempty" yaml:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty" yaml:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty" yaml:"options,omitempty"`
}

// KustomizeSelector selects the objects a patch applies to.
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeSelector struct {
	KustomizeResId     `json:",inline,omitempty" yaml:",inline,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty" yaml:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty" yaml:"labelSelector,omitempty"`
}

// KustomizeResId identifies an object by group, version, kind, name and namespace.
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeResId struct { //nolint:revive // Argo CD's name for the type
	KustomizeGvk `json:",inline,omitempty" yaml:",inline,omitempty"`
	Name         string `json:"name,omitempty" yaml:"name,omitempty"`
	Namespace    string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
}

// KustomizeGvk is a group, version and kind.
// +kubebuilder:pruning:PreserveUnknownFields
type KustomizeGvk struct {
	Group   string `json:"group,omitempty" yaml:"group,omitempty"`
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
	Kind    string `json:"kind,omitempty" yaml:"kind,omitempty"`
}

// ApplicationSourceDirectory holds options for plain manifest and Jsonnet
// folders.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceDirectory struct {
	// Recurse walks sub-folders too.
	Recurse bool `json:"recurse,omitempty"`
	// Jsonnet holds the options of .jsonnet files.
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty,omitzero"`
	// Exclude is a glob of paths (relative to the source path) to skip.
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob of paths (relative to the source path) to keep.
	Include string `json:"include,omitempty"`
	// DisableExtensionFilter reads files of any extension (include and
	// exclude still apply), not only .yaml, .yml, .json and .jsonnet.
	DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
}

// ApplicationSourceJsonnet holds the options of Jsonnet files.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourceJsonnet struct {
	// ExtVars are external variables (std.extVar).
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	// TLAs are top-level arguments of the files' functions.
	TLAs []JsonnetVar `json:"tlas,omitempty"`
	// Libs are library folders, relative to the repository root.
	Libs []string `json:"libs,omitempty"`
}

// IsZero reports options that change nothing.
func (j *ApplicationSourceJsonnet) IsZero() bool {
	return j == nil || len(j.ExtVars) == 0 && len(j.TLAs) == 0 && len(j.Libs) == 0
}

// JsonnetVar is a Jsonnet variable: a string, or Jsonnet code when Code.
// $ARGOCD_APP_NAME and the other build variables in Value are expanded.
// +kubebuilder:pruning:PreserveUnknownFields
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// ApplicationDestination is the cluster and namespace an app deploys to.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationDestination struct {
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}
