package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	stdsync "sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/render"
)

// comparison is the outcome of one refresh: what Git wants, what runs,
// and how they differ.
type comparison struct {
	revisions   []string
	sourceTypes []string
	desired     []*unstructured.Unstructured
	live        []*unstructured.Unstructured
	diffs       []diff.Result
	resources   []v1alpha1.ResourceStatus
	sync        v1alpha1.SyncStatusCode
	health      health.AppHealth
}

// compare renders the app and compares it with the live objects. A render
// or Git error is returned as it is: the caller records a condition and
// leaves every object in place.
func (r *Reconciler) compare(ctx context.Context, app *v1alpha1.Application, s *Settings) (*comparison, error) {
	res, err := r.renderApp(ctx, app)
	if err != nil {
		return nil, err
	}
	cmp, err := r.diffRendered(ctx, app, res, s)
	if err != nil {
		return nil, err
	}
	r.watches.ensure(ctx, r, kindsOf(cmp.desired, nil))
	cmp.resources, cmp.health = r.resourceStatuses(app, cmp, s)
	return cmp, nil
}

// diffRendered compares what app rendered to with the live objects its
// tracking finds.
func (r *Reconciler) diffRendered(ctx context.Context, app *v1alpha1.Application, res *rendered, s *Settings) (*comparison, error) {
	desired, err := r.prepareDesired(app, res.Objects, s)
	if err != nil {
		return nil, err
	}
	tracking := trackingOf(s, app.Name)
	live, err := r.cluster.ListTracked(ctx, tracking, kube.ListOptions{Kinds: kindsOf(desired, app.Status.Resources)})
	if err != nil {
		return nil, fmt.Errorf("list live objects: %w", err)
	}
	cmp := &comparison{revisions: res.Revisions, sourceTypes: res.types, desired: desired, live: live}
	if err := r.diffAll(ctx, app, cmp); err != nil {
		return nil, err
	}
	return cmp, nil
}

// prepareDesired copies the rendered objects, gives namespaced objects
// without a namespace the destination namespace, and drops what sync skips.
func (r *Reconciler) prepareDesired(app *v1alpha1.Application, objs []*unstructured.Unstructured, s *Settings) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			namespaced, err := r.cluster.IsNamespaced(o.GroupVersionKind().GroupKind())
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

// diffAll compares every desired object with its live counterpart, and
// lists live objects that left Git as extra.
func (r *Reconciler) diffAll(ctx context.Context, app *v1alpha1.Application, cmp *comparison) error {
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, l := range cmp.live {
		liveByKey[objKey(l)] = l
	}
	opts := diff.Options{Ignore: append(ignoreRules(app.Spec.IgnoreDifferences), controllerOwnedFields...), Predictor: r.predictor(app, liveByKey)}
	desiredKeys := map[string]bool{}
	for _, d := range cmp.desired {
		desiredKeys[objKey(d)] = true
		if isHookOrSkipped(d) {
			continue
		}
		res, err := diff.Compare(ctx, d, liveByKey[objKey(d)], opts)
		if err != nil {
			// A dry run that fails (missing CRD, invalid field) still
			// yields a comparison: the object is out of sync.
			res = diff.Result{GVK: d.GroupVersionKind(), Namespace: d.GetNamespace(), Name: d.GetName(),
				Status: diff.OutOfSync, Missing: liveByKey[objKey(d)] == nil, Text: err.Error()}
		}
		if res.Status == diff.OutOfSync {
			loggerFrom(ctx).Debug("out of sync", "object", res.GVK.Kind+"/"+res.Name, "diff", res.Text)
		}
		cmp.diffs = append(cmp.diffs, res)
	}
	for _, l := range cmp.live {
		if desiredKeys[objKey(l)] || l.GetOwnerReferences() != nil && isOwnedByTracked(l) {
			continue
		}
		res, err := diff.Extra(l)
		if err != nil {
			return err
		}
		cmp.diffs = append(cmp.diffs, res)
	}
	return nil
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

func isHookOrSkipped(o *unstructured.Unstructured) bool {
	a := o.GetAnnotations()
	if _, ok := a["argocd.argoproj.io/hook"]; ok {
		return true
	}
	_, ok := a["helm.sh/hook"]
	return ok
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

// capabilities describes the destination for Helm; unknown on error.
func (r *Reconciler) capabilities(ctx context.Context) render.Capabilities {
	r.version.Do(func() {
		if v, err := r.discovery.ServerVersion(); err == nil {
			r.kubeVer = v.GitVersion
		} else {
			loggerFrom(ctx).Warn("read server version", "err", err)
		}
	})
	return render.Capabilities{KubeVersion: r.kubeVer}
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

// predictor dry-runs an apply in the app's apply mode, so the diff shows
// what the API server would store (a server-side diff). A prediction is
// reused while neither the desired object nor the live one (its
// resourceVersion) changed, so a periodic refresh of an unchanged app
// costs no dry run.
func (r *Reconciler) predictor(app *v1alpha1.Application, live map[string]*unstructured.Unstructured) diff.Predictor {
	mode := kube.ClientSideApply
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true") {
		mode = kube.ServerSideApply
	}
	return diff.PredictorFunc(func(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		key := objKey(desired)
		stamp, ok := predictionStamp(desired, live[key], mode)
		if ok {
			if p, hit := r.predictions.get(key, stamp); hit {
				return p, nil
			}
		}
		p, err := r.cluster.Apply(ctx, desired, kube.ApplyOptions{Mode: mode, DryRun: true})
		if err == nil && ok {
			r.predictions.put(key, stamp, p)
		}
		return p, err
	})
}

// predictionStamp identifies the inputs of a prediction.
func predictionStamp(desired, live *unstructured.Unstructured, mode kube.ApplyMode) (string, bool) {
	b, err := json.Marshal(desired.Object)
	if err != nil {
		return "", false
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	rv := ""
	if live != nil {
		rv = string(live.GetUID()) + "/" + live.GetResourceVersion()
	}
	return fmt.Sprintf("%x|%s|%s", h.Sum64(), rv, mode), true
}

// predictionCache holds the last prediction of each object.
type predictionCache struct {
	mu stdsync.Mutex
	m  map[string]prediction
}

type prediction struct {
	stamp string
	obj   *unstructured.Unstructured
}

func (c *predictionCache) get(key, stamp string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[key]
	if !ok || p.stamp != stamp {
		return nil, false
	}
	return p.obj.DeepCopy(), true
}

func (c *predictionCache) put(key, stamp string, obj *unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]prediction{}
	}
	c.m[key] = prediction{stamp: stamp, obj: obj.DeepCopy()}
}
