package sync

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// SyncOptions are an application's syncOptions (Argo CD's strings such as
// "ServerSideApply=true"), parsed by ParseSyncOptions.
type SyncOptions struct {
	ServerSideApply             bool
	PruneLast                   bool
	CreateNamespace             bool
	ApplyOutOfSyncOnly          bool
	Replace                     bool
	Force                       bool
	SkipDryRunOnMissingResource bool
	FailOnSharedResource        bool
	RespectIgnoreDifferences    bool
	// SkipValidation is Validate=false.
	SkipValidation bool
	// PrunePropagationPolicy is foreground when empty.
	PrunePropagationPolicy metav1.DeletionPropagation
}

// ParseSyncOptions parses Argo CD's syncOptions list. Options wavecd does not
// know are ignored, as Argo CD does; a known option with a bad value is an
// error.
func ParseSyncOptions(list []string) (SyncOptions, error) {
	var o SyncOptions
	for _, item := range list { // as v1alpha1.SyncOptions.Option reads them
		key, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "PrunePropagationPolicy" {
			p, err := parsePropagation(value)
			if err != nil {
				return o, err
			}
			o.PrunePropagationPolicy = p
			continue
		}
		flag := boolOption(&o, key)
		if flag == nil {
			continue
		}
		if value != "true" && value != "false" {
			return o, fmt.Errorf("sync option %s: value %q is not true or false", key, value)
		}
		*flag = value == "true"
		if key == "Validate" {
			*flag = value == "false"
		}
	}
	return o, nil
}

// boolOption returns the field of o that key sets; Validate sets
// SkipValidation, which the caller inverts.
func boolOption(o *SyncOptions, key string) *bool {
	switch key {
	case "ServerSideApply":
		return &o.ServerSideApply
	case "PruneLast":
		return &o.PruneLast
	case "CreateNamespace":
		return &o.CreateNamespace
	case "ApplyOutOfSyncOnly":
		return &o.ApplyOutOfSyncOnly
	case "Replace":
		return &o.Replace
	case "Force":
		return &o.Force
	case "SkipDryRunOnMissingResource":
		return &o.SkipDryRunOnMissingResource
	case "FailOnSharedResource":
		return &o.FailOnSharedResource
	case "RespectIgnoreDifferences":
		return &o.RespectIgnoreDifferences
	case "Validate":
		return &o.SkipValidation
	}
	return nil
}

func parsePropagation(value string) (metav1.DeletionPropagation, error) {
	switch strings.ToLower(value) {
	case "foreground":
		return metav1.DeletePropagationForeground, nil
	case "background":
		return metav1.DeletePropagationBackground, nil
	case "orphan":
		return metav1.DeletePropagationOrphan, nil
	}
	return "", fmt.Errorf("sync option PrunePropagationPolicy: %q is not foreground, background or orphan", value)
}

// Options configure a sync: the plan and its execution.
type Options struct {
	// AppName is the application's name, written into the tracking.
	AppName string
	// Namespace is the destination namespace, given to namespaced objects
	// without one.
	Namespace string
	// Revision is the revision being synced; part of generated hook names.
	Revision string
	// Tracking is the tracking method; annotation when empty.
	Tracking kube.TrackingMethod
	// InstallationID separates several wavecd or Argo CD instances that
	// share a cluster (argocd-cm installationID).
	InstallationID string
	// Sync holds the application's sync options.
	Sync SyncOptions
	// Prune allows deleting objects that left the desired state.
	Prune bool
	// PruneConfirmed confirms the prune of objects marked Prune=confirm.
	PruneConfirmed bool
	// AllowEmpty allows a prune that leaves the application without objects.
	AllowEmpty bool
	// DryRun runs every dry run and reports, applying nothing.
	DryRun bool
	// SkipHooks leaves hooks out of the sync.
	SkipHooks bool
	// Health assesses objects; Argo CD's built-in checks when nil.
	Health *health.Assessor
	// WaveDelay waits this long after a wave is healthy before the next one
	// starts; 0 by default, 2s for Argo CD parity.
	WaveDelay time.Duration
	// Stop, when closed, asks the sync to stop at its next safe point (see
	// safeToStop): Run then returns ErrStopped. The controller closes it
	// when a new revision supersedes an automated sync.
	Stop <-chan struct{}
	// Terminate, when closed, ends the sync at once (a step's writes
	// finish first): running hooks are deleted and Run returns
	// ErrTerminated with the state Failed, "Operation terminated". The
	// controller closes it when a user terminates the operation.
	Terminate <-chan struct{}
	// Deadline, when set, is when the sync times out: a wait that reaches
	// it ends, running hooks are released, and the sync ends Failed with
	// DeadlineReason and what it waited for (a step's writes finish first).
	Deadline       time.Time
	DeadlineReason string
	// ArgoParity keeps Argo CD's sync engine where wavecd goes further: a
	// custom resource whose CRD the sync applies is never dry-run, and an
	// object too large for client-side apply is not applied server-side.
	ArgoParity bool
	// IgnoreDifferences are the application's ignoreDifferences, used by
	// ApplyOutOfSyncOnly and RespectIgnoreDifferences.
	IgnoreDifferences []diff.IgnoreRule
	// Concurrency bounds the parallel writes of one kind; 16 when 0.
	Concurrency int
	// Scope tells whether a kind is namespaced; a built-in list of
	// cluster-scoped kinds when nil. kube.Cluster implements it.
	Scope Scope
	// DryRuns, when set, tells which dry runs already succeeded (a
	// refresh's server-side diff made them): those tasks skip theirs. It
	// learns what each write returned.
	DryRuns DryRunCache
	// OnProgress is called with a copy of the state after every step, so
	// the caller can persist it.
	OnProgress func(State)
	// Checkpoint is called with a copy of the state, once per sync, before
	// its first hook named from a generateName is created; it returns once
	// the state is saved, so a resumed sync knows the names it chose.
	Checkpoint func(State)
	// OnEvent is called with every event the executor records.
	OnEvent func(Event)
	// StallTimeout is how long a wait may make no progress before it is
	// examined as a stall (DefaultStallTimeout when 0, never when negative).
	StallTimeout time.Duration
	// NodeProvisioners, when set, tells a stall whose pods cannot be
	// scheduled which apps deploy a node provisioner and where they are.
	NodeProvisioners NodeProvisionerFinder
	// Namespaces, when set, tells which namespaces are known to exist:
	// CreateNamespace then skips creating one of them (a request that
	// would only find it there).
	Namespaces NamespaceLister
	// Permitted, when set, checks every desired object (hooks too) before
	// the plan is made: an error fails the sync before anything is
	// written. The controller checks the app's project lists with it.
	Permitted func(obj *unstructured.Unstructured, namespaced bool) error
}

// NamespaceLister knows namespaces that exist at the destination.
type NamespaceLister interface {
	NamespaceExists(ctx context.Context, name string) bool
}

// DryRunCache knows dry runs that succeeded: applying desired over live
// (nil: creating it) in mode, with the same inputs, cannot fail now.
type DryRunCache interface {
	Succeeded(desired, live *unstructured.Unstructured, mode kube.ApplyMode) bool
	// Applied records what the sync's write of desired in mode returned:
	// applying desired again over it would change nothing, so it is the
	// prediction for those inputs, and the one a dry run made before the
	// write is no longer needed.
	Applied(desired, applied *unstructured.Unstructured, mode kube.ApplyMode)
}

// Scope tells whether objects of a kind live in a namespace.
type Scope interface {
	IsNamespaced(gk schema.GroupKind) (bool, error)
}

// objectOptions are an object's own sync options
// (v1alpha1.AnnotationSyncOptions).
type objectOptions struct{ v1alpha1.SyncOptions }

func parseObjectOptions(obj *unstructured.Unstructured) objectOptions {
	if obj == nil {
		return objectOptions{}
	}
	return objectOptions{v1alpha1.ObjectSyncOptions(obj.GetAnnotations())}
}

// is reports whether option key is set to value.
func (o objectOptions) is(key, value string) bool { return o.OptionIs(key, value) }

// value is option key's value, "" when it is not set.
func (o objectOptions) value(key string) string {
	v, _ := o.Option(key)
	return v
}

// applySettings are the effective write settings of one object.
type applySettings struct {
	Mode                        kube.ApplyMode `json:"mode,omitempty"`
	Force                       bool           `json:"force,omitempty"`
	SkipValidation              bool           `json:"skipValidation,omitempty"`
	SkipDryRunOnMissingResource bool           `json:"skipDryRunOnMissingResource,omitempty"`
	// LastAppliedSize, when set, says the object is applied server-side
	// because client-side apply cannot write it: its last-applied
	// configuration, this many bytes, would pass the annotations' limit.
	LastAppliedSize int `json:"lastAppliedSize,omitempty"`
}

// serverSideWhenTooLarge applies obj server-side when client-side apply
// would be refused for the size of its last-applied annotation (a CRD of
// hundreds of KiB), as Flux always applies; under Argo CD parity the API
// server's refusal stands, as in Argo CD.
func serverSideWhenTooLarge(s applySettings, obj *unstructured.Unstructured, parity bool) applySettings {
	if s.Mode != kube.ClientSideApply || parity {
		return s
	}
	if size, tooLarge := kube.TooLargeForClientSide(obj); tooLarge {
		s.Mode, s.LastAppliedSize = kube.ServerSideApply, size
	}
	return s
}

// settingsFor merges the application's options with obj's own.
func settingsFor(app SyncOptions, obj, live *unstructured.Unstructured) applySettings {
	own, liveOwn := parseObjectOptions(obj), parseObjectOptions(live)
	s := applySettings{
		Force:                       app.Force || own.is("Force", "true") || liveOwn.is("Force", "true"),
		SkipValidation:              app.SkipValidation || own.is("Validate", "false"),
		SkipDryRunOnMissingResource: app.SkipDryRunOnMissingResource || own.is("SkipDryRunOnMissingResource", "true"),
	}
	replace := (app.Replace || own.is("Replace", "true") || liveOwn.is("Replace", "true")) && !own.is("Replace", "false")
	ssa := (app.ServerSideApply || own.is("ServerSideApply", "true")) && !own.is("ServerSideApply", "false")
	switch {
	case replace:
		s.Mode = kube.Replace
	case ssa:
		s.Mode = kube.ServerSideApply
	default:
		s.Mode = kube.ClientSideApply
	}
	return s
}
