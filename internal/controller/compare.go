package controller

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// comparison is the outcome of one refresh: what Git wants, what runs,
// and how they differ.
type comparison struct {
	revisions   []string
	sourceTypes []string
	desired     []*unstructured.Unstructured
	live        []*unstructured.Unstructured
	diffs       []diff.Result
	// hooks are the live hooks of the app: listed in its resources, never
	// compared, never counted in its sync status or health.
	hooks     []*unstructured.Unstructured
	resources []v1alpha1.ResourceStatus
	sync      v1alpha1.SyncStatusCode
	health    health.AppHealth
	tracking  kube.Tracking
	// warnings are what the render skipped on purpose.
	warnings []string
}

// compareOptions say how to compare an app.
type compareOptions struct {
	render renderOptions
	// applied are objects as a sync has just written them: newer than
	// the live cache's copies until its watch catches up.
	applied []*unstructured.Unstructured
}

// compare renders the app and compares it with the live objects. A render
// or Git error is returned as it is: the caller records a condition and
// leaves every object in place.
func (r *Reconciler) compare(ctx context.Context, tgt *target, app *v1alpha1.Application, s *Settings, co compareOptions) (*comparison, error) {
	res, err := r.renderApp(ctx, tgt, app, co.render)
	if err != nil {
		return nil, err
	}
	cmp, err := r.diffRendered(ctx, tgt, app, res, s, co.applied...)
	if err != nil {
		return nil, err
	}
	cmp.warnings = res.Warnings
	cmp.resources, cmp.health = r.resourceStatuses(app, cmp, s)
	return cmp, nil
}

// diffRendered compares what app rendered to with the live objects its
// tracking finds, or the copies in applied where those are newer.
func (r *Reconciler) diffRendered(ctx context.Context, tgt *target, app *v1alpha1.Application, res *rendered, s *Settings,
	applied ...*unstructured.Unstructured) (*comparison, error) {
	desired, err := prepareDesired(tgt, app, res.Objects, s)
	if err != nil {
		return nil, err
	}
	tracking := trackingOf(s, app.Name)
	live, err := r.listLive(ctx, tgt, app, tracking, kindsOf(desired, app.Status.Resources))
	if err != nil {
		return nil, err
	}
	live = newest(live, applied, tracking)
	cmp := &comparison{revisions: res.Revisions, sourceTypes: res.types, desired: desired, live: live, tracking: tracking}
	if err := r.diffAll(ctx, tgt, app, cmp); err != nil {
		return nil, err
	}
	return cmp, nil
}

// listLive returns the app's live objects of kinds in the target, from
// the live cache unless an ignoreDifferences rule needs managedFields,
// which the cache drops. Child Applications of the local cluster come from
// the controller's own cache.
func (r *Reconciler) listLive(ctx context.Context, tgt *target, app *v1alpha1.Application, tracking kube.Tracking, kinds []schema.GroupKind) ([]*unstructured.Unstructured, error) {
	list := tgt.live.ListTracked
	for _, d := range app.Spec.IgnoreDifferences {
		if len(d.ManagedFieldsManagers) > 0 {
			list = tgt.kube.ListTracked
		}
	}
	r.watchManaged(ctx, tgt, kinds)
	others := slices.DeleteFunc(slices.Clone(kinds), func(gk schema.GroupKind) bool { return gk == applicationGK })
	if len(others) == len(kinds) || !r.ownsApps(tgt) {
		others = kinds
	}
	var live []*unstructured.Unstructured
	if len(others) > 0 { // no kinds would mean every kind of the cluster
		var err error
		if live, err = list(ctx, tracking, kube.ListOptions{Kinds: others}); err != nil {
			return nil, fmt.Errorf("list live objects: %w", err)
		}
	}
	if len(others) < len(kinds) {
		children, err := r.childApps(ctx, tracking)
		if err != nil {
			return nil, fmt.Errorf("list live objects: %w", err)
		}
		live = append(live, children...)
	}
	return live, nil
}

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

// childApps returns the Applications tracking says belong to the app,
// from the controller's own Application cache: the one whose events
// refresh a parent, so a parent never reads a child older than the change
// that woke it.
func (r *Reconciler) childApps(ctx context.Context, tracking kube.Tracking) ([]*unstructured.Unstructured, error) {
	apps := &v1alpha1.ApplicationList{}
	if err := r.client.List(ctx, apps, client.InNamespace(r.opts.Namespace)); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range apps.Items {
		a := &apps.Items[i]
		if r.trackingOwner(a.Annotations, a.Labels) != tracking.AppName {
			continue
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
		if err != nil {
			return nil, fmt.Errorf("convert application %s: %w", a.Name, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
		if tracking.Tracks(u) {
			out = append(out, u)
		}
	}
	return out, nil
}

// prepareDesired copies the rendered objects, gives namespaced objects
// without a namespace the destination namespace, and drops what sync skips.
func prepareDesired(tgt *target, app *v1alpha1.Application, objs []*unstructured.Unstructured, s *Settings) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			namespaced, err := tgt.kube.IsNamespaced(o.GroupVersionKind().GroupKind())
			if err != nil && !isNoMatch(err) {
				return nil, err
			}
			if namespaced || (err != nil && isNoMatch(err)) {
				o.SetNamespace(app.Spec.Destination.Namespace)
			}
		}
		trackingOf(s, app.Name).Set(o)
		out = append(out, o)
	}
	return out, nil
}

func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }

// kindsOf lists the kinds of objs and of the resources in the last status,
// so objects that left Git are still found.
func kindsOf(objs []*unstructured.Unstructured, last []v1alpha1.ResourceStatus) []schema.GroupKind {
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

func refKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

func objKey(o *unstructured.Unstructured) string {
	return refKey(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())
}

// diffAll compares every desired object with its live counterpart (in
// parallel: each may need a dry run and a read), and lists live objects
// that left Git as extra.
func (r *Reconciler) diffAll(ctx context.Context, tgt *target, app *v1alpha1.Application, cmp *comparison) error {
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, l := range cmp.live {
		liveByKey[objKey(l)] = l
	}
	ignore := append(ignoreRules(app.Spec.IgnoreDifferences), controllerOwnedFields...)
	results := make([]objectDiff, len(cmp.desired))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(diffConcurrency)
	desiredKeys := map[string]bool{}
	for i, d := range cmp.desired {
		desiredKeys[objKey(d)] = true
		if hook.IsHook(d) || hook.IsSkipped(d) {
			results[i].skip = true
			continue
		}
		live := liveByKey[objKey(d)]
		g.Go(func() error {
			results[i] = diffOne(gctx, tgt, app, d, live, cmp.tracking, ignore)
			return nil
		})
	}
	_ = g.Wait()
	for i, d := range cmp.desired {
		if results[i].skip {
			continue
		}
		if results[i].confirmed {
			liveByKey[objKey(d)] = results[i].live
		}
		cmp.diffs = append(cmp.diffs, results[i].res)
	}
	for _, l := range cmp.live {
		if hook.IsHook(l) {
			cmp.hooks = append(cmp.hooks, l)
			continue
		}
		if desiredKeys[objKey(l)] || l.GetOwnerReferences() != nil && isOwnedByTracked(l) {
			continue
		}
		if fresh, changed := confirmLive(ctx, tgt, l, l, cmp.tracking); changed {
			liveByKey[objKey(l)] = fresh
			if fresh == nil {
				continue
			}
		}
		res, err := diff.Extra(liveByKey[objKey(l)])
		if err != nil {
			return err
		}
		cmp.diffs = append(cmp.diffs, res)
	}
	cmp.live = cmp.live[:0]
	for _, l := range liveByKey {
		if l != nil {
			cmp.live = append(cmp.live, l)
		}
	}
	sortObjects(cmp.live)
	return nil
}

// diffConcurrency bounds the objects of one app compared at once.
const diffConcurrency = 8

// objectDiff is the comparison of one desired object.
type objectDiff struct {
	res  diff.Result
	skip bool
	// confirmed says live is the API server's copy, read because the
	// cached one disagreed with Git.
	confirmed bool
	live      *unstructured.Unstructured
}

// diffOne compares desired with its cached live copy and, when they
// differ, with the API server's copy.
func diffOne(ctx context.Context, tgt *target, app *v1alpha1.Application, desired, live *unstructured.Unstructured,
	tracking kube.Tracking, ignore []diff.IgnoreRule) objectDiff {
	key := objKey(desired)
	opts := diff.Options{Ignore: ignore}
	predictor := tgt.predictor
	if hasCompareOption(app.Annotations, "ServerSideDiff=false") {
		predictor = clientSidePredictor
	}
	if live != nil {
		// A missing object is shown as Git has it, as Argo CD's diff
		// does: a dry run of its creation would only add defaults, and
		// the sync dry-runs it anyway before anything is written.
		opts.Predictor = predictor(app, map[string]*unstructured.Unstructured{key: live})
	}
	res := compareOne(ctx, desired, live, opts)
	if res.Status == diff.OutOfSync && (live != nil || !neverSynced(app)) {
		if fresh, changed := confirmLive(ctx, tgt, desired, live, tracking); changed {
			opts.Predictor = nil
			if fresh != nil {
				opts.Predictor = predictor(app, map[string]*unstructured.Unstructured{key: fresh})
			}
			res = compareOne(ctx, desired, fresh, opts)
			return logDrift(ctx, objectDiff{res: res, confirmed: true, live: fresh})
		}
	}
	return logDrift(ctx, objectDiff{res: res, live: live})
}

func logDrift(ctx context.Context, d objectDiff) objectDiff {
	if d.res.Status == diff.OutOfSync {
		logctx.From(ctx).Debug("out of sync", "object", d.res.GVK.Kind+"/"+d.res.Name, "diff", d.res.Text)
	}
	return d
}

// compareOne diffs one desired object with its live copy (nil: missing). A
// dry run that fails (missing CRD, invalid field) still yields a
// comparison: the object is out of sync.
func compareOne(ctx context.Context, desired, live *unstructured.Unstructured, opts diff.Options) diff.Result {
	res, err := diff.Compare(ctx, desired, live, opts)
	if err != nil {
		res = diff.Result{GVK: desired.GroupVersionKind(), Namespace: desired.GetNamespace(), Name: desired.GetName(),
			Status: diff.OutOfSync, Missing: live == nil, Text: err.Error()}
	}
	return res
}

// neverSynced reports an app no sync has run or been asked for: the
// controller has written none of its objects, so one missing from the
// cache is missing (an object someone else creates arrives as an event
// that refreshes the app again).
func neverSynced(app *v1alpha1.Application) bool {
	return app.Operation == nil && app.Status.OperationState == nil && len(app.Status.History) == 0
}

// confirmLive re-reads from the API server an object whose cached copy
// disagrees with Git, is missing or is extra, so a cache that has not seen
// the latest write yet never reports drift. It returns the object as the
// API server has it (nil when it is gone or not the app's), and whether
// that differs from cached.
func confirmLive(ctx context.Context, tgt *target, obj, cached *unstructured.Unstructured, tracking kube.Tracking) (*unstructured.Unstructured, bool) {
	if !tgt.live.Cached(obj.GroupVersionKind().GroupKind()) {
		return cached, false
	}
	fresh, err := tgt.kube.GetOptional(ctx, kube.RefOf(obj))
	if err != nil {
		return cached, false
	}
	if fresh != nil && !tracking.Tracks(fresh) {
		fresh = nil
	}
	switch {
	case fresh == nil && cached == nil:
		return nil, false
	case fresh == nil || cached == nil:
		return fresh, true
	}
	return fresh, fresh.GetResourceVersion() != cached.GetResourceVersion()
}

func sortObjects(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool { return kube.RefOf(objs[i]).String() < kube.RefOf(objs[j]).String() })
}

// isOwnedByTracked reports objects created by a controller (a ReplicaSet
// of a Deployment) that copied the tracking annotation; they are not the
// app's own.
func isOwnedByTracked(o *unstructured.Unstructured) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// controllerOwnedFields are written by controllers, not by Git: a child
// Application's requested operation is never drift.
var controllerOwnedFields = []diff.IgnoreRule{{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind, JSONPointers: []string{"/operation"}}}

func ignoreRules(in []v1alpha1.ResourceIgnoreDifferences) []diff.IgnoreRule {
	out := make([]diff.IgnoreRule, 0, len(in))
	for _, d := range in {
		out = append(out, diff.IgnoreRule{
			Group: d.Group, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace,
			JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, ManagedFieldsManagers: d.ManagedFieldsManagers,
		})
	}
	return out
}

// sameSpec reports whether the last comparison used the app's current spec.
func sameSpec(c v1alpha1.ComparedTo, app *v1alpha1.Application) bool {
	src := v1alpha1.ApplicationSource{}
	if app.Spec.Source != nil {
		src = *app.Spec.Source
	}
	return reflect.DeepEqual(c.Source, src) && reflect.DeepEqual(c.Sources, app.Spec.Sources) &&
		c.Destination == app.Spec.Destination && reflect.DeepEqual(c.IgnoreDifferences, app.Spec.IgnoreDifferences)
}

func comparedTo(app *v1alpha1.Application) v1alpha1.ComparedTo {
	c := v1alpha1.ComparedTo{Destination: app.Spec.Destination, Sources: app.Spec.Sources, IgnoreDifferences: app.Spec.IgnoreDifferences}
	if app.Spec.Source != nil {
		c.Source = *app.Spec.Source
	}
	return c
}

func nowPtr(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

var _ client.Object = (*v1alpha1.Application)(nil)

// AnnotationCompareOptions holds an app's or an object's comparison
// options, comma-separated: ServerSideDiff=false on an Application diffs
// it client-side, IgnoreExtraneous on a live object keeps it from making
// its app OutOfSync when it is no longer in Git. IncludeMutationWebhook=true
// is what wavecd's server-side diff always does: its dry run goes through
// the mutating webhooks.
const AnnotationCompareOptions = "argocd.argoproj.io/compare-options"

// hasCompareOption reports whether annotations list option among their
// compare options.
func hasCompareOption(annotations map[string]string, option string) bool {
	for item := range strings.SplitSeq(annotations[AnnotationCompareOptions], ",") {
		if strings.TrimSpace(item) == option {
			return true
		}
	}
	return false
}

// clientSidePredictor predicts applies without the API server (Argo CD's
// client-side diff: a three-way merge with the last-applied
// configuration).
func clientSidePredictor(_ *v1alpha1.Application, live map[string]*unstructured.Unstructured) diff.Predictor {
	return diff.PredictorFunc(func(_ context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return kube.PredictClientSide(desired, live[objKey(desired)])
	})
}
