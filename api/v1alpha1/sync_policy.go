package v1alpha1

import "strings"

// SyncPolicy controls when and how an app syncs.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicy struct {
	Automated                *SyncPolicyAutomated      `json:"automated,omitempty"`
	SyncOptions              SyncOptions               `json:"syncOptions,omitempty"`
	Retry                    *RetryStrategy            `json:"retry,omitempty"`
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated turns on automated sync.
// +kubebuilder:pruning:PreserveUnknownFields
type SyncPolicyAutomated struct {
	Prune      bool `json:"prune,omitempty"`
	SelfHeal   bool `json:"selfHeal,omitempty"`
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled false turns automated sync off while keeping its settings.
	Enabled *bool `json:"enabled,omitempty"`
}

// IsAutomated reports whether automated sync is on.
func (p *SyncPolicy) IsAutomated() bool {
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// SyncOptions are `Key=Value` options such as `ServerSideApply=true`.
type SyncOptions []string

// AnnotationSyncOptions holds an object's own sync options,
// comma-separated (Prune=false,ServerSideApply=true).
const AnnotationSyncOptions = "argocd.argoproj.io/sync-options"

// HasOption reports whether the exact option `Key=Value` is set.
func (o SyncOptions) HasOption(option string) bool {
	for _, x := range o {
		if strings.TrimSpace(x) == option {
			return true
		}
	}
	return false
}

// Option returns the value of option key (the last one set, as Argo CD
// reads them), and whether it is set at all.
func (o SyncOptions) Option(key string) (string, bool) {
	value, set := "", false
	for _, x := range o {
		k, v, ok := strings.Cut(strings.TrimSpace(x), "=")
		if ok && strings.TrimSpace(k) == key {
			value, set = strings.TrimSpace(v), true
		}
	}
	return value, set
}

// OptionIs reports whether option key is set to value.
func (o SyncOptions) OptionIs(key, value string) bool {
	v, set := o.Option(key)
	return set && v == value
}

// ObjectSyncOptions are the sync options an object's annotations list
// under AnnotationSyncOptions.
func ObjectSyncOptions(annotations map[string]string) SyncOptions {
	v := annotations[AnnotationSyncOptions]
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return SyncOptions(strings.Split(v, ","))
}

// RetryStrategy controls retries of a failed sync.
// +kubebuilder:pruning:PreserveUnknownFields
type RetryStrategy struct {
	// Limit is the number of retries; -1 is unlimited.
	Limit   int64    `json:"limit,omitempty"`
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh re-reads Git before each retry.
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is the retry backoff: Duration, times Factor after each try,
// capped at MaxDuration. Durations are Go duration strings or seconds.
// +kubebuilder:pruning:PreserveUnknownFields
type Backoff struct {
	Duration    string `json:"duration,omitempty"`
	Factor      *int64 `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata is set on a namespace created by CreateNamespace.
// +kubebuilder:pruning:PreserveUnknownFields
type ManagedNamespaceMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ResourceIgnoreDifferences masks fields out of the diff.
// +kubebuilder:pruning:PreserveUnknownFields
type ResourceIgnoreDifferences struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}
