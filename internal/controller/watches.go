package controller

import (
	"context"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
func (rt *router) onNewInformer(gk schema.GroupKind, inf toolscache.SharedIndexInformer) {
	if rt.ctrl == nil {
		return
	}
	events := rt.managedEvents
	if gk == health.EndpointSliceGroupKind {
		events = rt.gateEvents
	}
	src := &ctrlsource.Informer{Informer: inf, Handler: handler.EnqueueRequestsFromMapFunc(events)}
	if err := rt.ctrl.Watch(src); err != nil {
		slog.Warn("watch managed kind", "kind", gk.String(), "err", err)
	}
}

// managedEvents marks the owning app for refresh.
func (rt *router) managedEvents(_ context.Context, obj client.Object) []reconcile.Request {
	owner := rt.trackingOwner(obj.GetAnnotations(), obj.GetLabels())
	if owner == "" {
		return nil
	}
	rt.refreshes.mark(owner, normalRefresh)
	return []reconcile.Request{rt.request(owner)}
}

// trackingOwner returns the app of this installation an object's
// tracking names, by its instance name.
func (rt *router) trackingOwner(annotations, labels map[string]string) string {
	return kube.NamedApp(rt.installationID(), annotations, labels)
}
