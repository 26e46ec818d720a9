package controller

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavecd/wavecd/internal/logctx"
)

// watchManaged makes the target's live cache watch the kinds an app
// manages there: a change to one of its objects refreshes the app at once
// (no polling), and later refreshes read the app's objects from memory.
// Kinds nobody uses are never watched.
func (r *Reconciler) watchManaged(ctx context.Context, tgt *target, kinds []schema.GroupKind) {
	if r.ownsApps(tgt) {
		// Child Applications are read from the controller's own cache.
		kinds = slices.DeleteFunc(slices.Clone(kinds), func(gk schema.GroupKind) bool { return gk == applicationGK })
	}
	if err := tgt.live.Ensure(kinds); err != nil {
		logctx.From(ctx).Warn("watch managed kinds", "server", tgt.server, "err", err)
	}
}

// ownsApps reports whether the controller's own Application cache holds
// the target's Applications: the local cluster's, once the controller runs.
func (r *Reconciler) ownsApps(tgt *target) bool { return tgt.local && r.cache != nil }

// onNewInformer routes a new informer's events to the apps its objects
// belong to.
func (r *Reconciler) onNewInformer(gk schema.GroupKind, inf toolscache.SharedIndexInformer) {
	if r.ctrl == nil {
		return
	}
	src := &ctrlsource.Informer{Informer: inf, Handler: handler.EnqueueRequestsFromMapFunc(r.managedEvents)}
	if err := r.ctrl.Watch(src); err != nil {
		slog.Warn("watch managed kind", "kind", gk.String(), "err", err)
	}
}

// managedEvents marks the owning app for refresh.
func (r *Reconciler) managedEvents(_ context.Context, obj client.Object) []reconcile.Request {
	owner := r.trackingOwner(obj.GetAnnotations(), obj.GetLabels())
	if owner == "" {
		return nil
	}
	r.refreshes.mark(owner, false)
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.opts.Namespace, Name: owner}}}
}

// trackingOwner returns the app of this installation named by an object's
// tracking annotation (the part before the first colon) or, failing that,
// its instance label.
func (r *Reconciler) trackingOwner(annotations, labels map[string]string) string {
	if annotations["argocd.argoproj.io/installation-id"] != r.installationID() {
		return ""
	}
	if id := annotations["argocd.argoproj.io/tracking-id"]; id != "" {
		app, _, _ := strings.Cut(id, ":")
		return app
	}
	return labels["app.kubernetes.io/instance"]
}

// installationID is the installation ID in force (argocd-cm's, or the
// option's when set).
func (r *Reconciler) installationID() string {
	if r.opts.InstallationID != "" {
		return r.opts.InstallationID
	}
	r.settings.mu.Lock()
	defer r.settings.mu.Unlock()
	if r.settings.settings != nil {
		return r.settings.settings.InstallationID
	}
	return ""
}
