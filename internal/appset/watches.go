package appset

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// ownerIndex indexes Applications by the ApplicationSet that controls them.
const ownerIndex = ".metadata.controller.applicationset"

// ownerOf returns the name of the ApplicationSet controlling an app.
func ownerOf(obj client.Object) []string {
	if name := controllingSet(obj); name != "" {
		return []string{name}
	}
	return nil
}

func controllingSet(obj client.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != v1alpha1.ApplicationSetKind || !strings.HasPrefix(ref.APIVersion, v1alpha1.Group+"/") {
		return ""
	}
	return ref.Name
}

// watch sets up what makes a set reconcile: a change to its spec,
// annotations (the refresh annotation), finalizers or deletion; a change to
// an app it controls that its status or rollout reads; and any change to a
// cluster Secret, for sets with a clusters generator.
func (r *Reconciler) watch(c controller.Controller, ca, apps cache.Cache) error {
	sets := ctrlsource.Kind(ca, &v1alpha1.ApplicationSet{}, &handler.TypedEnqueueRequestForObject[*v1alpha1.ApplicationSet]{},
		predicate.TypedFuncs[*v1alpha1.ApplicationSet]{UpdateFunc: func(e event.TypedUpdateEvent[*v1alpha1.ApplicationSet]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return o.Generation != n.Generation || !maps.Equal(o.Annotations, n.Annotations) ||
				!slices.Equal(o.Finalizers, n.Finalizers) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
		}})
	if err := c.Watch(sets); err != nil {
		return err
	}
	appEvents := ctrlsource.Kind(apps, &v1alpha1.Application{}, handler.TypedFuncs[*v1alpha1.Application, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*v1alpha1.Application], q queue) {
			enqueueOwner(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*v1alpha1.Application], q queue) {
			if appView(e.ObjectOld) != appView(e.ObjectNew) {
				enqueueOwner(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*v1alpha1.Application], q queue) {
			enqueueOwner(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*v1alpha1.Application], q queue) {
			enqueueOwner(e.Object, q)
		},
	})
	if err := c.Watch(appEvents); err != nil {
		return err
	}
	secrets := ctrlsource.Kind(ca, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(r.clusterSecretEvents))
	return c.Watch(secrets)
}

func enqueueOwner(app *v1alpha1.Application, q queue) {
	if name := controllingSet(app); name != "" {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: app.Namespace, Name: name}})
	}
}

// view is what a set reads of an app it controls.
type view struct {
	health, sync, opPhase, opStarted string
	operation, deleting              bool
	meta                             uint64
}

func appView(app *v1alpha1.Application) view {
	v := view{
		health: string(app.Status.Health.Status), sync: string(app.Status.Sync.Status),
		operation: app.Operation != nil, deleting: app.DeletionTimestamp != nil,
	}
	if st := app.Status.OperationState; st != nil {
		v.opPhase, v.opStarted = string(st.Phase), st.StartedAt.String()
	}
	h := fnv.New64a()
	for _, part := range []any{app.Spec, app.Labels, app.Annotations, app.Finalizers, app.OwnerReferences} {
		if b, err := json.Marshal(part); err == nil {
			_, _ = h.Write(b)
		}
	}
	v.meta = h.Sum64()
	return v
}

// clusterSecretEvents invalidates every generated result (a cluster
// generator's parameters changed) and enqueues the sets that read
// clusters.
func (r *Reconciler) clusterSecretEvents(ctx context.Context, _ *corev1.Secret) []reconcile.Request {
	r.results.bumpClusters()
	list := &v1alpha1.ApplicationSetList{}
	if err := r.client.List(ctx, list, client.InNamespace(r.opts.Namespace)); err != nil {
		logctx.From(ctx).Warn("list applicationsets for a cluster Secret change", "err", err)
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if usesClusters(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// usesClusters reports whether a set has a clusters generator, nested or
// not.
func usesClusters(set *v1alpha1.ApplicationSet) bool {
	raw, err := json.Marshal(set.Spec.Generators)
	return err != nil || strings.Contains(string(raw), `"clusters":`)
}
