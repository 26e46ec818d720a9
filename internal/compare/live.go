package compare

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// ApplicationGK is the group and kind of an Argo CD Application.
var ApplicationGK = schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind}

// PrepareDesired copies the rendered objects, gives namespaced objects
// without a namespace the destination namespace, and marks each with the
// app's tracking.
func PrepareDesired(tgt *destination.Target, app *v1alpha1.Application, objs []*unstructured.Unstructured, s *Settings) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			namespaced, err := tgt.Kube.IsNamespaced(o.GroupVersionKind().GroupKind())
			if err != nil && !meta.IsNoMatchError(err) {
				return nil, err
			}
			if namespaced || (err != nil && meta.IsNoMatchError(err)) {
				o.SetNamespace(app.Spec.Destination.Namespace)
			}
		}
		s.TrackingOf(app).Set(o)
		out = append(out, o)
	}
	return out, nil
}

// KindsOf lists the kinds of objs and of the resources in the last status,
// so objects that left Git are still found.
func KindsOf(objs []*unstructured.Unstructured, last []v1alpha1.ResourceStatus) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	add := func(gk schema.GroupKind) {
		if !seen[gk] {
			seen[gk] = true
			out = append(out, gk)
		}
	}
	for _, o := range objs {
		add(o.GroupVersionKind().GroupKind())
	}
	for _, rs := range last {
		add(schema.GroupKind{Group: rs.Group, Kind: rs.Kind})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Live returns the app's live objects of kinds at tgt, from the live
// cache unless an ignoreDifferences rule needs managedFields, which the
// cache drops. The live cache starts watching kinds it did not watch yet:
// a change to one of the app's objects then refreshes the app at once.
// Child Applications at the local destination come from Options.Apps.
func (c *Comparer) Live(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, tracking kube.Tracking, kinds []schema.GroupKind) ([]*unstructured.Unstructured, error) {
	listed, err := c.listLive(ctx, tgt, app, tracking, kinds)
	if err != nil {
		return nil, err
	}
	return listed.all()
}

// liveList is what listLive found: objects, and the app's child
// Applications as the controller's cache holds them (not to be changed),
// converted only when a comparison needs them: a memoized one does not.
type liveList struct {
	objs     []*unstructured.Unstructured
	children []*v1alpha1.Application
	// brief converts the children brief (see briefChild).
	brief bool
}

// all returns every live object, the children converted.
func (l liveList) all() ([]*unstructured.Unstructured, error) {
	out := l.objs
	for _, a := range l.children {
		if l.brief {
			a = briefChild(a)
		}
		u, err := application.ToUnstructured(a)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// briefChildren reports whether a assesses child Applications with
// wavecd's own check, which reads only what briefChild keeps.
func briefChildren(a *health.Assessor) bool {
	return a != nil && a.Source(ApplicationGK) == health.SourceApplication
}

// briefChild is a child Application as its parent's comparison reads it
// when wavecd's own check of child apps assesses their health: the status
// that check reads (health, sync, the operation's phase and message) and
// none of what grows with the child's own objects and syncs (its
// resources, history, summary and conditions, its last operation and
// result). The diff never reads a status, and a health check from
// argocd-cm or a Lua library may read anything, so it gets the whole app.
// A root's comparison converts thousands of children at once: the whole
// apps were the most it held (68 MB of a 5,000-app root's last
// comparison). The copy shares what it keeps with a, which is only read.
func briefChild(a *v1alpha1.Application) *v1alpha1.Application {
	c := &v1alpha1.Application{TypeMeta: a.TypeMeta, ObjectMeta: a.ObjectMeta, Spec: a.Spec, Operation: a.Operation}
	c.Status.Health, c.Status.Sync = a.Status.Health, a.Status.Sync
	if op := a.Status.OperationState; op != nil {
		c.Status.OperationState = &v1alpha1.OperationState{Phase: op.Phase, Message: op.Message, StartedAt: op.StartedAt}
	}
	return c
}

// listLive is Live with the child Applications left unconverted.
func (c *Comparer) listLive(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, tracking kube.Tracking, kinds []schema.GroupKind) (liveList, error) {
	list, byManager := tgt.Live.ListTracked, diff.ReadsManagedFields(app.Spec.IgnoreDifferences)
	if byManager {
		list = tgt.Kube.ListTracked
	}
	c.watch(ctx, tgt, kinds)
	others := slices.DeleteFunc(slices.Clone(kinds), func(gk schema.GroupKind) bool { return gk == ApplicationGK })
	if len(others) == len(kinds) || !c.ownsApps(tgt) || byManager {
		others = kinds // the controller's cache of Applications drops managedFields too
	}
	var out liveList
	if len(others) > 0 { // no kinds would mean every kind of the cluster
		var err error
		if out.objs, err = list(ctx, tracking, kube.ListOptions{Kinds: others}); err != nil {
			return liveList{}, fmt.Errorf("list live objects: %w", err)
		}
	}
	if len(others) < len(kinds) {
		children, err := c.childApps(ctx, tracking)
		if err != nil {
			return liveList{}, fmt.Errorf("list live objects: %w", err)
		}
		out.children = children
	}
	return out, nil
}

// watch makes the target's live cache watch the kinds an app manages
// there, so later refreshes read the app's objects from memory. Kinds
// nobody uses are never watched.
func (c *Comparer) watch(ctx context.Context, tgt *destination.Target, kinds []schema.GroupKind) {
	if c.ownsApps(tgt) {
		// Child Applications are read from the controller's own cache.
		kinds = slices.DeleteFunc(slices.Clone(kinds), func(gk schema.GroupKind) bool { return gk == ApplicationGK })
	}
	if err := tgt.Live.Ensure(kinds); err != nil {
		logctx.From(ctx).Warn("watch managed kinds", "server", tgt.Server, "err", err)
	}
}

// ownsApps reports whether Options.Apps holds the target's Applications:
// the local cluster's, when the Comparer runs in a controller.
func (c *Comparer) ownsApps(tgt *destination.Target) bool { return tgt.Local && c.opts.Apps != nil }

// newest returns live with each object replaced by its copy in applied
// when that is newer (a higher resourceVersion) or not cached yet.
func newest(live, applied []*unstructured.Unstructured, tracking kube.Tracking) []*unstructured.Unstructured {
	if len(applied) == 0 {
		return live
	}
	at := make(map[string]int, len(live))
	for i, l := range live {
		at[objKey(l)] = i
	}
	for _, a := range applied {
		if !tracking.Tracks(a) {
			continue
		}
		i, ok := at[objKey(a)]
		switch {
		case !ok:
			at[objKey(a)] = len(live)
			live = append(live, a)
		case kube.NewerVersion(a.GetResourceVersion(), live[i].GetResourceVersion()):
			live[i] = a
		}
	}
	return live
}

// childApps returns the Applications tracking says belong to the app:
// the cache's own copies, from Options.Apps, of every namespace it holds
// (apps in any namespace).
func (c *Comparer) childApps(ctx context.Context, tracking kube.Tracking) ([]*v1alpha1.Application, error) {
	apps := &v1alpha1.ApplicationList{}
	if err := c.opts.Apps.List(ctx, apps, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var out []*v1alpha1.Application
	for i := range apps.Items {
		a := &apps.Items[i]
		if kube.NamedApp(tracking.InstallationID, a.Annotations, a.Labels) != tracking.AppName {
			continue
		}
		// What tracking reads: kind, name and metadata.
		meta := &unstructured.Unstructured{}
		meta.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
		meta.SetNamespace(a.Namespace)
		meta.SetName(a.Name)
		meta.SetAnnotations(a.Annotations)
		meta.SetLabels(a.Labels)
		if tracking.Tracks(meta) {
			out = append(out, a)
		}
	}
	return out, nil
}

func refKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

func objKey(o *unstructured.Unstructured) string {
	return refKey(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())
}

func sortObjects(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool { return kube.RefOf(objs[i]).String() < kube.RefOf(objs[j]).String() })
}
