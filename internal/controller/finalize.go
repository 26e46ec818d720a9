package controller

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// The resources finalizers: foreground (the plain name) and background.
const (
	FinalizerResources           = "resources-finalizer.argocd.argoproj.io"
	FinalizerResourcesBackground = "resources-finalizer.argocd.argoproj.io/background"
	FinalizerResourcesForeground = "resources-finalizer.argocd.argoproj.io/foreground"
)

// finalize deletes the app's objects when a resources finalizer is set,
// waits until they are gone, then lets the Application go.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application, s *Settings) (reconcile.Result, error) {
	r.runners.stop(app.Name)
	fin, policy := "", metav1.DeletePropagationForeground
	for _, f := range app.Finalizers {
		switch f {
		case FinalizerResources, FinalizerResourcesForeground:
			fin = f
		case FinalizerResourcesBackground:
			fin, policy = f, metav1.DeletePropagationBackground
		}
	}
	if fin == "" {
		return reconcile.Result{}, nil
	}
	_, tgt, err := r.targets.resolve(ctx, app)
	if isDestinationError(err) {
		// As Argo CD: objects in a cluster that is no longer registered
		// cannot be deleted; the app goes without them.
		logctx.From(ctx).Warn("destination cluster unknown: deleting the app without its objects", "err", err)
		return reconcile.Result{}, r.removeFinalizer(ctx, app, fin)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	live, err := tgt.kube.ListTracked(ctx, trackingOf(s, app.Name), kube.ListOptions{Kinds: kindsOf(nil, app.Status.Resources)})
	if err != nil {
		return reconcile.Result{}, r.setCondition(ctx, app, v1alpha1.ApplicationConditionDeletionError, err.Error())
	}
	for _, o := range live {
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		if err := tgt.kube.Delete(ctx, kube.RefOf(o), kube.DeleteOptions{Propagation: policy}); err != nil {
			return reconcile.Result{}, r.setCondition(ctx, app, v1alpha1.ApplicationConditionDeletionError, err.Error())
		}
	}
	if len(live) > 0 {
		logctx.From(ctx).Info("waiting for the app's objects to be deleted", "remaining", len(live))
		return reconcile.Result{RequeueAfter: requeueSoon / 4}, nil
	}
	return reconcile.Result{}, r.removeFinalizer(ctx, app, fin)
}

func (r *Reconciler) removeFinalizer(ctx context.Context, app *v1alpha1.Application, fin string) error {
	base := app.DeepCopy()
	app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return f == fin })
	if err := r.patchApp(ctx, app, base); err != nil {
		return fmt.Errorf("remove finalizer %s: %w", fin, err)
	}
	return nil
}
