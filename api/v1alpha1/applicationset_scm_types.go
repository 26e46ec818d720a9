package v1alpha1

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// SCMProviderGenerator is Argo CD's SCM provider generator: one parameter
// set per repository of an organization (per branch with allBranches)
// that passes the filters. Providers wavecd does not implement are kept
// as raw JSON, so that an error can name them.
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGenerator struct {
	Github          *SCMProviderGeneratorGithub  `json:"github,omitempty"`
	Gitea           *SCMProviderGeneratorGitea   `json:"gitea,omitempty"`
	Gitlab          *apiextensionsv1.JSON        `json:"gitlab,omitempty"`
	Bitbucket       *apiextensionsv1.JSON        `json:"bitbucket,omitempty"`
	BitbucketServer *apiextensionsv1.JSON        `json:"bitbucketServer,omitempty"`
	AzureDevOps     *apiextensionsv1.JSON        `json:"azureDevOps,omitempty"`
	AWSCodeCommit   *apiextensionsv1.JSON        `json:"awsCodeCommit,omitempty"`
	Filters         []SCMProviderGeneratorFilter `json:"filters,omitempty"`
	// CloneProtocol picks each repository's url: "ssh" (the default) or
	// "https".
	CloneProtocol       string `json:"cloneProtocol,omitempty"`
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overrides the set's template (its schema left open).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	Values   map[string]string       `json:"values,omitempty"`
}

// SCMProviderGeneratorGithub lists the repositories of a GitHub
// organization (GitHub Enterprise with api).
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorGithub struct {
	Organization         string     `json:"organization"`
	API                  string     `json:"api,omitempty"`
	TokenRef             *SecretRef `json:"tokenRef,omitempty"`
	AppSecretName        string     `json:"appSecretName,omitempty"`
	AllBranches          bool       `json:"allBranches,omitempty"`
	ExcludeArchivedRepos bool       `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorGitea lists the repositories of a Gitea
// organization.
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorGitea struct {
	Owner                string     `json:"owner"`
	API                  string     `json:"api"`
	TokenRef             *SecretRef `json:"tokenRef,omitempty"`
	AllBranches          bool       `json:"allBranches,omitempty"`
	Insecure             bool       `json:"insecure,omitempty"`
	ExcludeArchivedRepos bool       `json:"excludeArchivedRepos,omitempty"`
}

// SCMProviderGeneratorFilter keeps the repositories (and branches) for
// which every condition set holds.
// +kubebuilder:pruning:PreserveUnknownFields
type SCMProviderGeneratorFilter struct {
	RepositoryMatch *string  `json:"repositoryMatch,omitempty"`
	PathsExist      []string `json:"pathsExist,omitempty"`
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	LabelMatch      *string  `json:"labelMatch,omitempty"`
	BranchMatch     *string  `json:"branchMatch,omitempty"`
}

// SecretRef is a key of a Secret in the ApplicationSet's namespace.
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// PullRequestGenerator is Argo CD's pull request generator: one
// parameter set per open pull request of a repository that passes the
// filters.
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGenerator struct {
	Github          *PullRequestGeneratorGithub  `json:"github,omitempty"`
	Gitea           *PullRequestGeneratorGitea   `json:"gitea,omitempty"`
	Gitlab          *apiextensionsv1.JSON        `json:"gitlab,omitempty"`
	BitbucketServer *apiextensionsv1.JSON        `json:"bitbucketServer,omitempty"`
	Bitbucket       *apiextensionsv1.JSON        `json:"bitbucket,omitempty"`
	AzureDevOps     *apiextensionsv1.JSON        `json:"azuredevops,omitempty"`
	Filters         []PullRequestGeneratorFilter `json:"filters,omitempty"`
	// ContinueOnRepoNotFoundError makes a repository that is not found
	// yield no parameter sets instead of an error.
	ContinueOnRepoNotFoundError bool   `json:"continueOnRepoNotFoundError,omitempty"`
	RequeueAfterSeconds         *int64 `json:"requeueAfterSeconds,omitempty"`
	// Template overrides the set's template (its schema left open).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	Values   map[string]string       `json:"values,omitempty"`
}

// PullRequestGeneratorGithub lists the open pull requests of a GitHub
// repository carrying every one of labels.
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorGithub struct {
	Owner         string     `json:"owner"`
	Repo          string     `json:"repo"`
	API           string     `json:"api,omitempty"`
	TokenRef      *SecretRef `json:"tokenRef,omitempty"`
	AppSecretName string     `json:"appSecretName,omitempty"`
	Labels        []string   `json:"labels,omitempty"`
}

// PullRequestGeneratorGitea lists the open pull requests of a Gitea
// repository carrying every one of labels.
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorGitea struct {
	Owner    string     `json:"owner"`
	Repo     string     `json:"repo"`
	API      string     `json:"api"`
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	Insecure bool       `json:"insecure,omitempty"`
	Labels   []string   `json:"labels,omitempty"`
}

// PullRequestGeneratorFilter keeps the pull requests for which every
// pattern set matches.
// +kubebuilder:pruning:PreserveUnknownFields
type PullRequestGeneratorFilter struct {
	BranchMatch       *string `json:"branchMatch,omitempty"`
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
	TitleMatch        *string `json:"titleMatch,omitempty"`
}
