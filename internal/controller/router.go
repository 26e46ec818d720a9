package controller

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/shard"
)

// router turns watch events into the apps to reconcile: an app's own
// changes (and a refresh of its parent and of the apps that depend on it),
// its objects' changes, the EndpointSlices of the Services its readiness
// gates wait on, argocd-cm, its project and the cluster Secrets.
type router struct {
	client client.Client
	// ns says which namespaces' apps are the controller's, and names
	// them: the state below is keyed by an app's instance name.
	ns         application.Namespaces
	refreshes  *refreshSet
	parentPace *parentPace
	gates      *gateIndex
	targets    *destination.Targets
	// installationID is argocd-cm's installationID, or the option's.
	installationID func() string
	// shards is set, before the controller starts, when apps are sharded.
	shards *shard.Coordinator
	// ctrl is set, before the controller starts, to the controller that
	// watches the kinds the apps' objects are of.
	ctrl controller.Controller
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// appHandler turns Application events into work. The app itself is always
// reconciled (cheap when nothing is due); its parent (the app that tracks
// it) and the apps that depend on it only when something they read
// changed: sync, health, a requested or running operation, or its spec.
// A child's periodic refresh writes reconciledAt and nothing else, so it
// no longer makes a parent compare its hundreds of children again.
func (rt *router) appHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			rt.shardChanged(e)
			rt.appChanged(ctx, e.Object, q, true)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			rt.shardChanged(e)
			if lostDeleteHookFinalizers(e.ObjectOld, e.ObjectNew) {
				// Another writer (a parent app's sync, which writes the
				// finalizers its Git lists) took away what holds the app
				// for its deletion hooks: its comparison puts them back.
				rt.refreshes.mark(rt.ns.InstanceName(e.ObjectNew.GetNamespace(), e.ObjectNew.GetName()), normalRefresh)
			}
			rt.appChanged(ctx, e.ObjectNew, q, appView(e.ObjectOld) != appView(e.ObjectNew))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			rt.shardChanged(e)
			rt.appChanged(ctx, e.Object, q, true)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { rt.appChanged(ctx, e.Object, q, true) },
	}
}

// appChanged enqueues the app; for a relevant change, also the app that
// manages it (a parent in app of apps, paced: see parentPace) and the
// apps that depend on it.
func (rt *router) appChanged(_ context.Context, obj client.Object, q queue, relevant bool) {
	if !rt.ns.Enabled(obj.GetNamespace()) {
		return // the cache holds every namespace's apps: a glob matches some
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
	if !relevant {
		return
	}
	self := rt.ns.InstanceName(obj.GetNamespace(), obj.GetName())
	if parent := rt.trackingOwner(obj.GetAnnotations(), obj.GetLabels()); parent != "" && parent != self {
		rt.refreshes.mark(parent, normalRefresh)
		req := rt.request(parent)
		if d := rt.parentPace.delay(parent, time.Now()); d > 0 {
			q.AddAfter(req, d)
		} else {
			q.Add(req)
		}
	}
	for _, name := range rt.dependents(obj.GetNamespace(), obj.GetName()) {
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

// dependents names the apps in namespace that depend on app name: through
// the cache's index, or by listing every app when the client has none.
func (rt *router) dependents(namespace, name string) []string {
	ctx := context.Background()
	apps := &v1alpha1.ApplicationList{}
	err := rt.client.List(ctx, apps, client.InNamespace(namespace), client.MatchingFields{indexDependsOn: name})
	if err != nil {
		if err := rt.client.List(ctx, apps, client.InNamespace(namespace)); err != nil {
			return nil
		}
	}
	var out []string
	for i := range apps.Items {
		for _, d := range application.DependsOn(&apps.Items[i]) {
			if d == name {
				out = append(out, apps.Items[i].Name)
				break
			}
		}
	}
	return out
}

// settingsEvents refreshes every app when argocd-cm changes.
func (rt *router) settingsEvents(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetName() != SettingsConfigMap || obj.GetNamespace() != rt.ns.Control {
		return nil
	}
	apps := rt.apps(ctx)
	reqs := make([]reconcile.Request, 0, len(apps))
	for i := range apps {
		rt.refreshes.mark(rt.ns.InstanceName(apps[i].Namespace, apps[i].Name), normalRefresh)
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps[i])})
	}
	return reqs
}

// projectEvents reconciles the apps of a project that changed, so a
// project that permits an app again (or no longer does) takes effect at once.
func (rt *router) projectEvents(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, app := range rt.apps(ctx) {
		project := app.Spec.Project
		if project == obj.GetName() || project == "" && obj.GetName() == "default" {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&app)})
		}
	}
	return reqs
}

// apps are the controller's apps, from the cache (nil when it cannot list
// them).
func (rt *router) apps(ctx context.Context) []v1alpha1.Application {
	list := &v1alpha1.ApplicationList{}
	if err := rt.client.List(ctx, list); err != nil {
		return nil
	}
	out := list.Items[:0]
	for _, app := range list.Items {
		if rt.ns.Enabled(app.Namespace) {
			out = append(out, app)
		}
	}
	return out
}

// request is the reconcile of the app with instance name key.
func (rt *router) request(key string) reconcile.Request {
	return reconcile.Request{NamespacedName: rt.ns.ParseInstanceName(key)}
}

// shardChanged tells the Coordinator of an app event that may move apps:
// an app created or deleted, or a change of its pin or destination.
func (rt *router) shardChanged(e any) {
	if rt.shards == nil {
		return
	}
	switch e := e.(type) {
	case event.UpdateEvent:
		o, n := e.ObjectOld, e.ObjectNew
		oa, ok1 := o.(*v1alpha1.Application)
		na, ok2 := n.(*v1alpha1.Application)
		if ok1 && ok2 && oa.Annotations[shard.AnnotationShard] == na.Annotations[shard.AnnotationShard] &&
			oa.Spec.Destination == na.Spec.Destination {
			return
		}
	case event.GenericEvent:
		return
	}
	rt.shards.Changed()
}

// lostDeleteHookFinalizers reports whether an update of an app that is not
// being deleted removed a deletion-hook finalizer.
func lostDeleteHookFinalizers(old, updated client.Object) bool {
	if updated.GetDeletionTimestamp() != nil {
		return false
	}
	for _, f := range old.GetFinalizers() {
		if isDeleteHookFinalizer(f) && !slices.Contains(updated.GetFinalizers(), f) {
			return true
		}
	}
	return false
}
