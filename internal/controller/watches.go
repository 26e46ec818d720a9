package controller

import (
	"context"
	"strings"
	stdsync "sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"
)

// watchSet starts one metadata watch per kind that some app manages, so a
// change to a managed object refreshes its app at once (no polling). Kinds
// nobody uses are never watched.
type watchSet struct {
	mu      stdsync.Mutex
	watched map[schema.GroupKind]bool
}

func newWatchSet() *watchSet { return &watchSet{watched: map[schema.GroupKind]bool{}} }

func (w *watchSet) ensure(ctx context.Context, r *Reconciler, kinds []schema.GroupKind) {
	if r.ctrl == nil || r.cache == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gk := range kinds {
		if w.watched[gk] || gk == applicationGK {
			continue
		}
		m, err := r.cluster.Mapping(gk.WithVersion(""))
		if err != nil {
			continue // a kind whose CRD is not there yet; the next refresh retries
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(m.GroupVersionKind)
		src := ctrlsource.Kind(r.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(r.managedEvents))
		if err := r.ctrl.Watch(src); err != nil {
			loggerFrom(ctx).Warn("watch managed kind", "kind", gk.String(), "err", err)
			continue
		}
		w.watched[gk] = true
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
