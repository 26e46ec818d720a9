package appclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// Sync requests a sync by writing the app's `operation` field, as
// `argocd app sync --core` does. It does not wait; see WaitOperation.
type Sync struct {
	Client *Client
	Name   string
	// Revision to sync to; empty syncs the target revision. An app with
	// automated sync only accepts its own target revision.
	Revision string
	Prune    bool
	DryRun   bool
	// Resources limits the sync to the app's objects these patterns match:
	// each field may be a glob such as `*`, an empty Namespace matches any
	// (see ParseResource for the --resource syntax).
	Resources []v1alpha1.SyncOperationResource
	// SyncOptions replace the app's spec.syncPolicy.syncOptions when set.
	SyncOptions []string
	// Strategy is "hook" (the default) or "apply".
	Strategy string
	// Force deletes and re-creates objects that cannot be patched.
	Force bool
	// Retry replaces the app's spec.syncPolicy.retry when set.
	Retry *v1alpha1.RetryStrategy
	// Manifests, when set, are synced in place of what the app's sources
	// render: one YAML or JSON object each, as `argocd app sync --local`
	// sends them. An app with automated sync takes them in a dry run only.
	Manifests []string
}

// Run writes the operation and returns the app as written.
func (a *Sync) Run(ctx context.Context) (*v1alpha1.Application, error) {
	for _, r := range a.Resources {
		if err := checkResource(r); err != nil {
			return nil, err
		}
	}
	strategy, err := syncStrategy(a.Strategy, a.Force)
	if err != nil {
		return nil, err
	}
	if a.Manifests != nil {
		if _, err := application.DecodeManifests(a.Manifests); err != nil {
			return nil, err
		}
	}
	return a.Client.setOperation(ctx, a.Name, func(app *v1alpha1.Application) (*v1alpha1.Operation, error) {
		if err := a.check(app); err != nil {
			return nil, err
		}
		op := &v1alpha1.Operation{
			Sync: &v1alpha1.SyncOperation{
				Revision: a.Revision, Prune: a.Prune, DryRun: a.DryRun, SyncStrategy: strategy, Manifests: a.Manifests,
			},
			InitiatedBy: v1alpha1.OperationInitiator{Username: a.Client.Username},
		}
		if len(a.Resources) > 0 {
			op.Sync.Resources = selectResources(app, a.Resources)
			if len(op.Sync.Resources) == 0 {
				return nil, fmt.Errorf("no object of application %q matches --resource %s", app.Name, formatResources(a.Resources))
			}
		}
		if policy := app.Spec.SyncPolicy; policy != nil {
			op.Sync.SyncOptions = policy.SyncOptions
			if policy.Retry != nil {
				op.Retry = *policy.Retry
			}
		}
		if len(a.SyncOptions) > 0 {
			op.Sync.SyncOptions = a.SyncOptions
		}
		if a.Retry != nil {
			op.Retry = *a.Retry
		}
		return op, nil
	})
}

// check refuses what app's sync policy does not allow: another revision
// than its target, or local manifests, while automated sync is on.
func (a *Sync) check(app *v1alpha1.Application) error {
	if a.Manifests != nil && app.Spec.SyncPolicy.IsAutomated() && !a.DryRun {
		return errors.New("cannot use local sync when Automatic Sync Policy is enabled unless for dry run")
	}
	return checkAutomatedRevision(app, a.Revision)
}

func syncStrategy(name string, force bool) (*v1alpha1.SyncStrategy, error) {
	switch name {
	case "", "hook":
		return &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{SyncStrategyApply: v1alpha1.SyncStrategyApply{Force: force}}}, nil
	case "apply":
		return &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: force}}, nil
	}
	return nil, fmt.Errorf("unknown sync strategy %q: use hook or apply", name)
}

// checkAutomatedRevision refuses a sync to another revision than the
// target of an app with automated sync: the next automated sync would undo
// it at once.
func checkAutomatedRevision(app *v1alpha1.Application, revision string) error {
	if !app.Spec.SyncPolicy.IsAutomated() || revision == "" {
		return nil
	}
	target := "HEAD"
	if sources := app.Spec.GetSources(); len(sources) > 0 && sources[0].TargetRevision != "" {
		target = sources[0].TargetRevision
	}
	if revision != target {
		return fmt.Errorf("cannot sync to %s: auto-sync currently set to %s", revision, target)
	}
	return nil
}

// Rollback syncs an app to a revision of its history, as `argocd app
// rollback` does. Like Argo CD it refuses while automated sync is on.
type Rollback struct {
	Client *Client
	Name   string
	// ID is the history entry; a negative ID means the one before the
	// last deployment.
	ID     int64
	Prune  bool
	DryRun bool
}

// Run writes the rollback operation and returns the app as written.
func (a *Rollback) Run(ctx context.Context) (*v1alpha1.Application, error) {
	return a.Client.setOperation(ctx, a.Name, func(app *v1alpha1.Application) (*v1alpha1.Operation, error) {
		if app.Spec.SyncPolicy.IsAutomated() {
			return nil, fmt.Errorf("rollback cannot be initiated when auto-sync is enabled")
		}
		entry, err := historyEntry(app, a.ID)
		if err != nil {
			return nil, err
		}
		op := &v1alpha1.Operation{
			Sync: &v1alpha1.SyncOperation{
				Prune: a.Prune, DryRun: a.DryRun,
				SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{}},
			},
			InitiatedBy: v1alpha1.OperationInitiator{Username: a.Client.Username},
		}
		if len(entry.Sources) > 0 {
			op.Sync.Sources, op.Sync.Revisions = entry.Sources, entry.Revisions
		} else {
			src := entry.Source
			op.Sync.Source, op.Sync.Revision = &src, entry.Revision
		}
		if app.Spec.SyncPolicy != nil {
			op.Sync.SyncOptions = app.Spec.SyncPolicy.SyncOptions
		}
		return op, nil
	})
}

func historyEntry(app *v1alpha1.Application, id int64) (*v1alpha1.RevisionHistory, error) {
	h := app.Status.History
	var entry *v1alpha1.RevisionHistory
	switch {
	case id < 0 && len(h) < 2:
		return nil, fmt.Errorf("application %q should have at least two successful deployments", app.Name)
	case id < 0:
		entry = &h[len(h)-2]
	default:
		for i := range h {
			if h[i].ID == id {
				entry = &h[i]
			}
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("application %q does not have deployment with id %d", app.Name, id)
	}
	if entry.Source.RepoURL == "" && len(entry.Sources) == 0 {
		return nil, fmt.Errorf("history entry %d of application %q records no source: sync to its revision instead", entry.ID, app.Name)
	}
	return entry, nil
}
