package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSetKind is the kind of an ApplicationSet.
const ApplicationSetKind = "ApplicationSet"

// ApplicationSet generates Applications from a template and generators.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=applicationsets,shortName=appset;appsets,categories=argocd
// +kubebuilder:subresource:status
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ApplicationSetSpec   `json:"spec"`
	Status            ApplicationSetStatus `json:"status,omitempty"`
}

// ApplicationSetList is a list of ApplicationSets.
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ApplicationSet `json:"items"`
}

// ApplicationSetSpec is the set's generators, template and policies.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetSpec struct {
	GoTemplate                   bool                                      `json:"goTemplate,omitempty"`
	GoTemplateOptions            []string                                  `json:"goTemplateOptions,omitempty"`
	Generators                   []ApplicationSetGenerator                 `json:"generators"`
	Template                     ApplicationSetTemplate                    `json:"template"`
	SyncPolicy                   *ApplicationSetSyncPolicy                 `json:"syncPolicy,omitempty"`
	Strategy                     *ApplicationSetStrategy                   `json:"strategy,omitempty"`
	IgnoreApplicationDifferences []ApplicationSetResourceIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	TemplatePatch                *string                                   `json:"templatePatch,omitempty"`
	// PreservedFields are annotations and labels of generated apps that
	// the set leaves as users or other controllers set them.
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
	// ApplyNestedSelectors is accepted for compatibility and ignored:
	// selectors of nested generators are always applied, as in Argo CD 3.
	ApplyNestedSelectors bool `json:"applyNestedSelectors,omitempty"`
}

// ApplicationPreservedFields names annotation and label keys the set
// never overwrites on the apps it generates.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationPreservedFields struct {
	Annotations []string `json:"annotations,omitempty"`
	Labels      []string `json:"labels,omitempty"`
}

// ApplicationSetTemplate is the Application every element produces.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTemplate struct {
	ApplicationSetTemplateMeta `json:"metadata"`
	Spec                       ApplicationSpec `json:"spec"`
}

// ApplicationSetTemplateMeta is the generated app's metadata.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetTemplateMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

// ApplicationSetGenerator is one generator; exactly one field is set.
// Generators wavecd does not implement are kept as raw JSON, so that an
// error can name them.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetGenerator struct {
	List     *ListGenerator        `json:"list,omitempty"`
	Clusters *ClusterGenerator     `json:"clusters,omitempty"`
	Git      *GitGenerator         `json:"git,omitempty"`
	Matrix   *NestedGenerators     `json:"matrix,omitempty"`
	Merge    *NestedGenerators     `json:"merge,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	SCMProvider             *SCMProviderGenerator `json:"scmProvider,omitempty"`
	ClusterDecisionResource *DuckTypeGenerator    `json:"clusterDecisionResource,omitempty"`
	PullRequest             *PullRequestGenerator `json:"pullRequest,omitempty"`
	Plugin                  *PluginGenerator      `json:"plugin,omitempty"`
}

// ListGenerator yields its literal elements.
// +kubebuilder:pruning:PreserveUnknownFields
type ListGenerator struct {
	Elements     []apiextensionsv1.JSON  `json:"elements,omitempty"`
	Template     *ApplicationSetTemplate `json:"template,omitempty"`
	ElementsYaml string                  `json:"elementsYaml,omitempty"`
}

// ClusterGenerator yields one element per matching cluster Secret.
// +kubebuilder:pruning:PreserveUnknownFields
type ClusterGenerator struct {
	Selector metav1.LabelSelector    `json:"selector,omitempty"`
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	Values   map[string]string       `json:"values,omitempty"`
}

// GitGenerator yields directories or parsed files of a Git repository.
// +kubebuilder:pruning:PreserveUnknownFields
type GitGenerator struct {
	RepoURL             string                      `json:"repoURL"`
	Directories         []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	Files               []GitFileGeneratorItem      `json:"files,omitempty"`
	Revision            string                      `json:"revision"`
	RequeueAfterSeconds *int64                      `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate     `json:"template,omitempty"`
	PathParamPrefix     string                      `json:"pathParamPrefix,omitempty"`
	Values              map[string]string           `json:"values,omitempty"`
}

// PluginGenerator yields the parameter sets an HTTP service returns, as
// Argo CD's plugin generator: POST {baseUrl}/api/v1/getparams.execute
// with a bearer token, both from the ConfigMap configMapRef names.
// +kubebuilder:pruning:PreserveUnknownFields
type PluginGenerator struct {
	ConfigMapRef        PluginConfigMapRef      `json:"configMapRef"`
	Input               PluginInput             `json:"input,omitempty"`
	RequeueAfterSeconds *int64                  `json:"requeueAfterSeconds,omitempty"`
	Template            *ApplicationSetTemplate `json:"template,omitempty"`
	Values              map[string]string       `json:"values,omitempty"`
}

// DuckTypeGenerator is Argo CD's cluster-decision-resource generator: one
// parameter set per entry of status.<statusListKey> of the resources
// (the one named, or those labelSelector matches) whose group, version and
// resource the ConfigMap configMapRef gives, each matched to a registered
// cluster by name through matchKey.
// +kubebuilder:pruning:PreserveUnknownFields
type DuckTypeGenerator struct {
	ConfigMapRef        string                  `json:"configMapRef"`
	Name                string                  `json:"name,omitempty"`
	RequeueAfterSeconds *int64                  `json:"requeueAfterSeconds,omitempty"`
	LabelSelector       metav1.LabelSelector    `json:"labelSelector,omitempty"`
	Template            *ApplicationSetTemplate `json:"template,omitempty"`
	Values              map[string]string       `json:"values,omitempty"`
}

// PluginConfigMapRef names the plugin's ConfigMap in the set's namespace.
type PluginConfigMapRef struct {
	Name string `json:"name"`
}

// PluginInput is what the plugin is sent besides the set's name.
type PluginInput struct {
	// Parameters are any JSON values, sent as they are.
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// GitDirectoryGeneratorItem is a path glob, optionally excluding.
// +kubebuilder:pruning:PreserveUnknownFields
type GitDirectoryGeneratorItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// GitFileGeneratorItem is a file glob.
// +kubebuilder:pruning:PreserveUnknownFields
type GitFileGeneratorItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// NestedGenerators combines child generators (matrix or merge).
// +kubebuilder:pruning:PreserveUnknownFields
type NestedGenerators struct {
	Generators []apiextensionsv1.JSON  `json:"generators"`
	MergeKeys  []string                `json:"mergeKeys,omitempty"`
	Template   *ApplicationSetTemplate `json:"template,omitempty"`
}

// ApplicationSetSyncPolicy limits what the set does to its apps.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetSyncPolicy struct {
	PreserveResourcesOnDeletion bool    `json:"preserveResourcesOnDeletion,omitempty"`
	ApplicationsSync            *string `json:"applicationsSync,omitempty"`
}

// ApplicationSetStrategy is AllAtOnce or RollingSync.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetStrategy struct {
	Type        string                         `json:"type,omitempty"`
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
}

// ApplicationSetRolloutStrategy is a list of RollingSync steps.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetRolloutStrategy struct {
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects apps by label and caps parallel updates.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetRolloutStep struct {
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	MaxUpdate        *intstr.IntOrString          `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label requirement.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationMatchExpression struct {
	Key      string   `json:"key,omitempty"`
	Operator string   `json:"operator,omitempty"`
	Values   []string `json:"values,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences keeps app fields the set must
// not overwrite.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetResourceIgnoreDifferences struct {
	Name              string   `json:"name,omitempty"`
	JSONPointers      []string `json:"jsonPointers,omitempty"`
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetStatus reports conditions and per-app progress.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetStatus struct {
	Conditions        []ApplicationSetCondition         `json:"conditions,omitempty"`
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	Resources         []ResourceStatus                  `json:"resources,omitempty"`
}

// ApplicationSetConditionType names a condition of an ApplicationSet.
type ApplicationSetConditionType = string

// Condition types, statuses and reasons of an ApplicationSet, as Argo CD
// writes them.
const (
	ApplicationSetConditionErrorOccurred       ApplicationSetConditionType = "ErrorOccurred"
	ApplicationSetConditionParametersGenerated ApplicationSetConditionType = "ParametersGenerated"
	ApplicationSetConditionResourcesUpToDate   ApplicationSetConditionType = "ResourcesUpToDate"
	ApplicationSetConditionRolloutProgressing  ApplicationSetConditionType = "RolloutProgressing"

	ApplicationSetConditionStatusTrue  = "True"
	ApplicationSetConditionStatusFalse = "False"

	ApplicationSetReasonErrorOccurred                    = "ErrorOccurred"
	ApplicationSetReasonApplicationSetUpToDate           = "ApplicationSetUpToDate"
	ApplicationSetReasonParametersGenerated              = "ParametersGenerated"
	ApplicationSetReasonApplicationGeneratedSuccessfully = "ApplicationGeneratedSuccessfully"
	ApplicationSetReasonUpdateApplicationError           = "UpdateApplicationError"
	ApplicationSetReasonApplicationParamsGenerationError = "ApplicationGenerationFromParamsError"
	ApplicationSetReasonRenderTemplateParamsError        = "RenderTemplateParamsError"
	ApplicationSetReasonCreateApplicationError           = "CreateApplicationError"
	ApplicationSetReasonDeleteApplicationError           = "DeleteApplicationError"
	ApplicationSetReasonRefreshApplicationError          = "RefreshApplicationError"
	ApplicationSetReasonApplicationValidationError       = "ApplicationValidationError"
	ApplicationSetReasonApplicationSetModified           = "ApplicationSetModified"
	ApplicationSetReasonApplicationSetRolloutComplete    = "ApplicationSetRolloutComplete"
)

// Values of ApplicationSetApplicationStatus.Status during a RollingSync.
const (
	ProgressiveSyncWaiting     = "Waiting"
	ProgressiveSyncPending     = "Pending"
	ProgressiveSyncProgressing = "Progressing"
	ProgressiveSyncHealthy     = "Healthy"
)

// ApplicationSetCondition is a problem or state of the set.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetCondition struct {
	Type               string       `json:"type"`
	Message            string       `json:"message"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	Status             string       `json:"status"`
	Reason             string       `json:"reason"`
}

// ApplicationSetApplicationStatus is one generated app's rollout state.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSetApplicationStatus struct {
	Application        string       `json:"application"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	Message            string       `json:"message"`
	Status             string       `json:"status"`
	Step               string       `json:"step"`
	TargetRevisions    []string     `json:"targetRevisions,omitempty"`
}
