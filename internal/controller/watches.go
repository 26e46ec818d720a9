package controller

import (
	"context"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// onNewInformer routes a new informer's events to the apps its objects
// belong to.
func (r *Reconciler) onNewInformer(gk schema.GroupKind, inf toolscache.SharedIndexInformer) {
	if r.ctrl == nil {
		return
	}
	events := r.managedEvents
	if gk == health.EndpointSliceGroupKind {
		events = r.gateEvents
	}
	src := &ctrlsource.Informer{Informer: inf, Handler: handler.EnqueueRequestsFromMapFunc(events)}
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
	r.refreshes.mark(owner, normalRefresh)
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.opts.Namespace, Name: owner}}}
}

// trackingOwner returns the app of this installation an object's
// tracking names.
func (r *Reconciler) trackingOwner(annotations, labels map[string]string) string {
	return kube.NamedApp(r.installationID(), annotations, labels)
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
