package controller

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// appHandler turns Application events into work. The app itself is always
// reconciled (cheap when nothing is due); its parent (the app that tracks
// it) and the apps that depend on it only when something they read
// changed: sync, health, a requested or running operation, or its spec.
// A child's periodic refresh writes reconciledAt and nothing else, so it
// no longer makes a parent compare its hundreds of children again.
func (r *Reconciler) appHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			r.shardChanged(e)
			r.appChanged(ctx, e.Object, q, true)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			r.shardChanged(e)
			r.appChanged(ctx, e.ObjectNew, q, appView(e.ObjectOld) != appView(e.ObjectNew))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			r.shardChanged(e)
			r.appChanged(ctx, e.Object, q, true)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { r.appChanged(ctx, e.Object, q, true) },
	}
}

// appChanged enqueues the app; for a relevant change, also the app that
// manages it (a parent in app of apps, paced: see parentPace) and the
// apps that depend on it.
func (r *Reconciler) appChanged(_ context.Context, obj client.Object, q queue, relevant bool) {
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
	if !relevant {
		return
	}
	if parent := r.trackingOwner(obj.GetAnnotations(), obj.GetLabels()); parent != "" && parent != obj.GetName() {
		r.refreshes.mark(parent, normalRefresh)
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.opts.Namespace, Name: parent}}
		if d := r.parentPace.delay(parent, time.Now()); d > 0 {
			q.AddAfter(req, d)
		} else {
			q.Add(req)
		}
	}
	for _, name := range r.dependents(obj.GetNamespace(), obj.GetName()) {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}})
	}
}

// view is what parents and dependents read of an app.
type view struct {
	sync, health, opPhase string
	spec                  uint64
	operation, deleting   bool
}

func appView(obj client.Object) view {
	app, ok := obj.(*v1alpha1.Application)
	if !ok {
		return view{}
	}
	v := view{
		sync: string(app.Status.Sync.Status), health: string(app.Status.Health.Status),
		operation: app.Operation != nil, deleting: app.DeletionTimestamp != nil,
	}
	if st := app.Status.OperationState; st != nil {
		v.opPhase = string(st.Phase)
	}
	h := fnv.New64a()
	if b, err := json.Marshal(app.Spec); err == nil {
		_, _ = h.Write(b)
	}
	v.spec = h.Sum64()
	return v
}
