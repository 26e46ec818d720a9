package controller

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/operation"
	"github.com/wavecd/wavecd/internal/teardown"
)

// finalizer deletes apps whose deletion their finalizers hold: their
// deletion hooks and their objects.
type finalizer struct {
	comparer *compare.Comparer
	targets  *destination.Targets
	// runs is told to stop an app's sync before its deletion starts.
	runs       *operation.Registry
	argoParity bool
	now        func() time.Time
	// key is an app's key in the controller's state.
	key func(app *v1alpha1.Application) string
}

// deleteStage is one step of an app's deletion, held by one finalizer.
type deleteStage struct {
	finalizer string
	// run does the step and reports whether it is done.
	run func() (bool, error)
}

// finalize runs the deletion of an app in Argo CD's order, one finalizer
// at a time: its PreDelete hooks, then its objects (with a resources
// finalizer), then its PostDelete hooks, then the cleanup of both kinds of
// hooks by their delete policies. Each finalizer is removed once its step
// is done; the Application goes when none is left.
func (f *finalizer) finalize(ctx context.Context, app *v1alpha1.Application, s *Settings) (reconcile.Result, error) {
	f.runs.Stop(f.key(app))
	if !slices.ContainsFunc(app.Finalizers, isOwnFinalizer) {
		return reconcile.Result{}, nil
	}
	_, tgt, err := f.targets.Resolve(ctx, app)
	if destination.IsError(err) {
		// As Argo CD: objects in a cluster that is no longer registered
		// cannot be deleted; the app goes without them.
		logctx.From(ctx).Warn("destination cluster unknown: deleting the app without its objects", "err", err)
		app.Finalizers = slices.DeleteFunc(app.Finalizers, isOwnFinalizer)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, st := range f.deleteStages(ctx, tgt, app, s) {
		if !slices.Contains(app.Finalizers, st.finalizer) {
			continue
		}
		done, err := st.run()
		if err != nil {
			setCondition(ctx, app, f.now(), v1alpha1.ApplicationConditionDeletionError, err.Error())
			return reconcile.Result{RequeueAfter: requeueSoon * 5}, nil
		}
		if !done {
			return reconcile.Result{RequeueAfter: requeueSoon / 4}, nil
		}
		app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return f == st.finalizer })
	}
	return reconcile.Result{}, nil
}

// deleteStages lists the steps of app's deletion in the order they run.
func (f *finalizer) deleteStages(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings) []deleteStage {
	stages := []deleteStage{{v1alpha1.FinalizerPreDelete, func() (bool, error) { return f.runDeleteHooks(ctx, tgt, app, s, hook.PreDelete) }}}
	for _, name := range []string{v1alpha1.FinalizerResources, v1alpha1.FinalizerResourcesForeground, v1alpha1.FinalizerResourcesBackground} {
		policy := metav1.DeletePropagationForeground
		if name == v1alpha1.FinalizerResourcesBackground {
			policy = metav1.DeletePropagationBackground
		}
		stages = append(stages, deleteStage{name, func() (bool, error) { return f.deleteObjects(ctx, tgt, app, s, policy) }})
	}
	return append(stages,
		deleteStage{v1alpha1.FinalizerPostDelete, func() (bool, error) { return f.runDeleteHooks(ctx, tgt, app, s, hook.PostDelete) }},
		deleteStage{v1alpha1.FinalizerPreDeleteCleanup, func() (bool, error) { return f.cleanupDeleteHooks(ctx, tgt, app, s, hook.PreDelete) }},
		deleteStage{v1alpha1.FinalizerPostDeleteCleanup, func() (bool, error) { return f.cleanupDeleteHooks(ctx, tgt, app, s, hook.PostDelete) }},
	)
}

// deleteObjects runs one pass of the teardown of the app's tracked objects
// (internal/teardown: in reverse wave order, each step gone before the
// next, or in Argo CD's order with ArgoParity) and reports whether they are
// all gone. While it waits, the DeletionWait condition says on what, and
// DeletionStalled says so once a step has waited the stall timeout.
func (f *finalizer) deleteObjects(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, policy metav1.DeletionPropagation) (bool, error) {
	live, err := tgt.Kube.ListTracked(ctx, s.TrackingOf(app), kube.ListOptions{Kinds: compare.KindsOf(nil, app.Status.Resources)})
	if err != nil {
		return false, err
	}
	var syncOptions []string
	if app.Spec.SyncPolicy != nil {
		syncOptions = app.Spec.SyncPolicy.SyncOptions
	}
	plan := teardown.NewPlan(live, teardown.Options{
		ArgoParity: f.argoParity, App: app.Name, AppNamespace: app.Namespace, SyncOptions: syncOptions,
	})
	p, err := teardown.Advance(ctx, tgt.Kube, plan, teardown.AdvanceOptions{Propagation: policy})
	if err != nil {
		return false, err
	}
	if p.Done {
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionDeletionWait)
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionDeletionStalled)
		return true, nil
	}
	if len(p.Deleted) > 0 {
		logctx.From(ctx).Info("deleting the app's objects", "step", p.Step, "index", p.Index, "steps", p.Steps, "deleted", len(p.Deleted))
	}
	setCondition(ctx, app, f.now(), v1alpha1.ApplicationConditionDeletionWait, p.Message())
	if m := p.Stalled(f.now(), s.StallTimeout); m != "" {
		setCondition(ctx, app, f.now(), v1alpha1.ApplicationConditionDeletionStalled, "stalled: "+m)
	} else {
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionDeletionStalled)
	}
	return false, nil
}

// isOwnFinalizer reports the finalizers this controller works off.
func isOwnFinalizer(f string) bool {
	return f == v1alpha1.FinalizerResources || f == v1alpha1.FinalizerResourcesBackground || f == v1alpha1.FinalizerResourcesForeground || isDeleteHookFinalizer(f)
}
