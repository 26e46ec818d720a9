package compare

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// Comparison is the outcome of one comparison: what Git wants, what runs,
// how they differ, and the app's status as Argo CD shows it.
type Comparison struct {
	// Revisions are the resolved revisions of the app's sources, and
	// SourceTypes how each rendered, in spec order.
	Revisions   []string
	SourceTypes []string
	Desired     []*unstructured.Unstructured
	Live        []*unstructured.Unstructured
	// Diffs hold the normalized objects (Predicted, Live) of the objects
	// out of sync only: a Synced result has no diff to show.
	Diffs []diff.Result
	// Hooks are the live hooks of the app: listed in its resources, never
	// compared, never counted in its sync status or health.
	Hooks     []*unstructured.Unstructured
	Resources []v1alpha1.ResourceStatus
	Sync      v1alpha1.SyncStatusCode
	Health    health.AppHealth
	Tracking  kube.Tracking
	// Gates are the Services the app's admission webhook configurations
	// and APIServices call: their health waits for a ready endpoint.
	Gates []health.ServiceRef
	// Warnings are what the render skipped on purpose.
	Warnings []string
	// Memoized says the outcome (Resources, Sync, Health) is the app's
	// last comparison's, whose inputs were the same: Diffs and Hooks are
	// not computed then, and Live holds no child Applications.
	Memoized bool
	// children are the app's child Applications as the controller's cache
	// holds them, not yet converted into Live.
	children []*v1alpha1.Application
	// briefChildren converts them brief (see briefChild).
	briefChildren bool
}

// convertChildren adds the child Applications to Live.
func (cmp *Comparison) convertChildren() error {
	live, err := liveList{objs: cmp.Live, children: cmp.children, brief: cmp.briefChildren}.all()
	if err != nil {
		return err
	}
	cmp.Live, cmp.children = live, nil
	return nil
}

// CompareOptions say how to compare an app.
type CompareOptions struct {
	Render RenderOptions
	// Applied are objects as a sync has just written them: newer than the
	// live cache's copies until its watch catches up.
	Applied []*unstructured.Unstructured
	// Memo remembers the outcome with what it was computed from, and
	// returns a remembered outcome when nothing it was computed from
	// changed (see memo), unless Applied are given or the render is
	// Fresh.
	Memo bool
}

// Compare renders the app and compares it with its live objects at tgt. A
// render or Git error is returned as it is: the caller records a condition
// and leaves every object in place.
func (c *Comparer) Compare(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, co CompareOptions) (*Comparison, error) {
	res, err := c.Render(ctx, tgt, app, s, co.Render)
	if err != nil {
		return nil, err
	}
	cmp, err := c.listRendered(ctx, tgt, app, res, s, co.Applied...)
	if err != nil {
		return nil, err
	}
	cmp.Warnings = res.Warnings
	in := memoInputs{app: app, settings: s, target: tgt, cmp: cmp}
	if co.Memo && len(co.Applied) == 0 && !co.Render.Fresh {
		if key, ok := keyOf(in); ok {
			if e, ok := c.memo.get(in, key); ok {
				e.outcome(cmp)
				return cmp, nil
			}
		}
	}
	if err := cmp.convertChildren(); err != nil {
		return nil, err
	}
	if err := diffAll(ctx, tgt, app, cmp, s); err != nil {
		return nil, err
	}
	cmp.Gates = gatedServices(s, cmp.Live)
	eps, err := readEndpoints(ctx, tgt, cmp.Gates)
	if err != nil {
		// Without them the gates stay open: health is Argo CD's.
		logctx.From(ctx).Warn("readiness gates not read", "err", err)
	}
	cmp.Resources, cmp.Health = resourceStatuses(cmp, s, eps)
	if co.Memo {
		c.memo.put(in)
	}
	return cmp, nil
}

// diffRendered compares what app rendered to with the live objects its
// tracking finds, or the copies in applied where those are newer.
func (c *Comparer) diffRendered(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, res *Rendered, s *Settings,
	applied ...*unstructured.Unstructured) (*Comparison, error) {
	cmp, err := c.listRendered(ctx, tgt, app, res, s, applied...)
	if err != nil {
		return nil, err
	}
	if err := cmp.convertChildren(); err != nil {
		return nil, err
	}
	if err := diffAll(ctx, tgt, app, cmp, s); err != nil {
		return nil, err
	}
	return cmp, nil
}

// listRendered prepares what app rendered to and lists the live objects
// its tracking finds, or the copies in applied where those are newer.
// Child Applications stay unconverted (Comparison.children) unless
// applied are given.
func (c *Comparer) listRendered(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, res *Rendered, s *Settings,
	applied ...*unstructured.Unstructured) (*Comparison, error) {
	desired, err := PrepareDesired(tgt, app, res.Objects, s)
	if err != nil {
		return nil, err
	}
	tracking := s.TrackingOf(app)
	listed, err := c.listLive(ctx, tgt, app, tracking, KindsOf(desired, app.Status.Resources))
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{Revisions: res.Revisions, SourceTypes: res.SourceTypes, Desired: desired, Live: listed.objs, Tracking: tracking,
		children: listed.children, briefChildren: briefChildren(s.Assessor)}
	if len(applied) > 0 {
		if err := cmp.convertChildren(); err != nil {
			return nil, err
		}
		cmp.Live = newest(cmp.Live, applied, tracking)
	}
	return cmp, nil
}

// diffAll compares every desired object with its live counterpart (in
// parallel: each may need a dry run and a read), and lists live objects
// that left Git as extra.
func diffAll(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, cmp *Comparison, s *Settings) error {
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, l := range cmp.Live {
		liveByKey[objKey(l)] = l
	}
	ignore := ignoreRulesFor(app, s.ArgoParity)
	results := make([]objectDiff, len(cmp.Desired))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(diffConcurrency)
	desiredKeys := map[string]bool{}
	for i, d := range cmp.Desired {
		desiredKeys[objKey(d)] = true
		if hook.IsHook(d) || hook.IsSkipped(d) {
			results[i].skip = true
			continue
		}
		live := liveByKey[objKey(d)]
		g.Go(func() error {
			results[i] = diffOne(gctx, tgt, app, d, live, cmp.Tracking, ignore)
			if r := &results[i].res; r.Status == diff.Synced {
				// Only an object out of sync has a diff to show: a root's
				// thousands of children held their normalized copies at
				// once, the most a comparison of them held.
				r.Predicted, r.Live = nil, nil
			}
			return nil
		})
	}
	_ = g.Wait()
	for i, d := range cmp.Desired {
		if results[i].skip {
			continue
		}
		if results[i].confirmed {
			liveByKey[objKey(d)] = results[i].live
		}
		cmp.Diffs = append(cmp.Diffs, results[i].res)
	}
	if err := cmp.diffExtra(ctx, tgt, liveByKey, desiredKeys); err != nil {
		return err
	}
	cmp.Live = cmp.Live[:0]
	for _, l := range liveByKey {
		if l != nil {
			cmp.Live = append(cmp.Live, l)
		}
	}
	sortObjects(cmp.Live)
	return nil
}

// diffExtra lists the live objects that left Git (confirmed with the API
// server) as extra, and the hooks apart; liveByKey takes what the API
// server answered.
func (cmp *Comparison) diffExtra(ctx context.Context, tgt *destination.Target, liveByKey map[string]*unstructured.Unstructured, desiredKeys map[string]bool) error {
	for _, l := range cmp.Live {
		if hook.IsHook(l) {
			cmp.Hooks = append(cmp.Hooks, l)
			continue
		}
		if desiredKeys[objKey(l)] || l.GetOwnerReferences() != nil && isOwnedByTracked(l) {
			continue
		}
		if fresh, changed := confirmLive(ctx, tgt, l, l, cmp.Tracking); changed {
			liveByKey[objKey(l)] = fresh
			if fresh == nil {
				continue
			}
		}
		res, err := diff.Extra(liveByKey[objKey(l)])
		if err != nil {
			return err
		}
		cmp.Diffs = append(cmp.Diffs, res)
	}
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
func diffOne(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, desired, live *unstructured.Unstructured,
	tracking kube.Tracking, ignore ignoreRules) objectDiff {
	opts := diff.Options{Ignore: ignore.of(desired, live)}
	predictor := predictorFor(tgt, app)
	if live != nil {
		// A missing object is shown as Git has it, as Argo CD's diff
		// does: a dry run of its creation would only add defaults, and
		// the sync dry-runs it anyway before anything is written.
		opts.Predictor = predictor(live)
	}
	res := compareOne(ctx, desired, live, opts)
	if res.Status == diff.OutOfSync && (live != nil || !neverSynced(app)) {
		if fresh, changed := confirmLive(ctx, tgt, desired, live, tracking); changed {
			opts.Predictor, opts.Ignore = nil, ignore.of(desired, fresh)
			if fresh != nil {
				opts.Predictor = predictor(fresh)
			}
			res = compareOne(ctx, desired, fresh, opts)
			return logDrift(ctx, objectDiff{res: res, confirmed: true, live: fresh})
		}
	}
	return logDrift(ctx, objectDiff{res: res, live: live})
}

// predictorFor predicts applies in the app's apply mode at tgt (a
// server-side diff) or, with the compare option ServerSideDiff=false,
// without the API server (Argo CD's client-side diff: a three-way merge
// with the last-applied configuration).
func predictorFor(tgt *destination.Target, app *v1alpha1.Application) func(live *unstructured.Unstructured) diff.Predictor {
	if HasCompareOption(app.Annotations, "ServerSideDiff=false") {
		return func(live *unstructured.Unstructured) diff.Predictor {
			return diff.PredictorFunc(func(_ context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return kube.PredictClientSide(desired, live)
			})
		}
	}
	mode := kube.ClientSideApply
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.OptionIs("ServerSideApply", "true") {
		mode = kube.ServerSideApply
	}
	return func(live *unstructured.Unstructured) diff.Predictor { return tgt.Predictor(mode, live) }
}

// logDrift logs an object out of sync with its diff, at debug level: the
// text is made only when that is logged.
func logDrift(ctx context.Context, d objectDiff) objectDiff {
	log := logctx.From(ctx)
	if d.res.Status != diff.OutOfSync || !log.Enabled(ctx, slog.LevelDebug) {
		return d
	}
	res, err := d.res.WithText()
	if err != nil {
		res.Text = err.Error()
	}
	log.DebugContext(ctx, "out of sync", "object", res.GVK.Kind+"/"+res.Name, "diff", res.Text)
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
func confirmLive(ctx context.Context, tgt *destination.Target, obj, cached *unstructured.Unstructured, tracking kube.Tracking) (*unstructured.Unstructured, bool) {
	if !tgt.Live.Cached(obj.GroupVersionKind().GroupKind()) {
		return cached, false
	}
	fresh, err := tgt.Kube.GetOptional(ctx, kube.RefOf(obj))
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

// ignoreRules are the rules an app's objects are compared with: the app's
// own ignoreDifferences and the fields controllers own.
type ignoreRules struct {
	// all holds every rule; lean leaves out the jq program that finds a
	// child's deletion-hook finalizers: run for every child of a root at
	// every comparison, it was the most of a child's comparison, and it can
	// only remove finalizers a child lists.
	all, lean []diff.IgnoreRule
}

// ignoreRulesFor returns app's rules; argoParity keeps Argo CD's
// behaviour (see controllerOwnedFields).
func ignoreRulesFor(app *v1alpha1.Application, argoParity bool) ignoreRules {
	own := slices.Clip(app.Spec.IgnoreDifferences)
	return ignoreRules{
		all:  append(own, controllerOwnedFields(argoParity)...),
		lean: append(own, controllerOwnedFields(true)...),
	}
}

// of returns the rules for an object with these desired and live states
// (either may be nil): lean when neither lists a deletion-hook finalizer.
func (r ignoreRules) of(desired, live *unstructured.Unstructured) []diff.IgnoreRule {
	if hasDeletionHookFinalizer(desired) || hasDeletionHookFinalizer(live) {
		return r.all
	}
	return r.lean
}

func hasDeletionHookFinalizer(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	return slices.ContainsFunc(obj.GetFinalizers(), func(f string) bool {
		return slices.Contains(deletionHookFinalizers, f)
	})
}

// controllerOwnedFields are written by controllers, not by Git: a child
// Application's requested operation is never drift; nor, beyond Argo CD,
// the deletion-hook finalizers the child's own controller adds while its
// Git holds PreDelete or PostDelete hooks (a chart's Helm pre-delete
// hook is one). Argo CD's parent reports those as drift and, with
// self-heal, removes them again and again (argo-cd#17433, #27533); its
// users ignore them with this very rule in argocd-cm. argoParity keeps
// Argo CD's behaviour.
func controllerOwnedFields(argoParity bool) []diff.IgnoreRule {
	rule := diff.IgnoreRule{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind, JSONPointers: []string{"/operation"}}
	if !argoParity {
		rule.JQPathExpressions = []string{childFinalizers}
	}
	return []diff.IgnoreRule{rule}
}

// deletionHookFinalizers are the finalizers of an app's deletion hooks.
var deletionHookFinalizers = []string{v1alpha1.FinalizerPreDelete, v1alpha1.FinalizerPreDeleteCleanup,
	v1alpha1.FinalizerPostDelete, v1alpha1.FinalizerPostDeleteCleanup}

// childFinalizers selects a child Application's deletion-hook finalizers.
var childFinalizers = fmt.Sprintf(`.metadata.finalizers[]? | select(. == %q or . == %q or . == %q or . == %q)`,
	v1alpha1.FinalizerPreDelete, v1alpha1.FinalizerPreDeleteCleanup, v1alpha1.FinalizerPostDelete, v1alpha1.FinalizerPostDeleteCleanup)

// AnnotationCompareOptions holds an app's or an object's comparison
// options, comma-separated: ServerSideDiff=false on an Application diffs
// it client-side, IgnoreExtraneous on a live object keeps it from making
// its app OutOfSync when it is no longer in Git. IncludeMutationWebhook=true
// is what wavecd's server-side diff always does: its dry run goes through
// the mutating webhooks.
const AnnotationCompareOptions = "argocd.argoproj.io/compare-options"

// HasCompareOption reports whether annotations list option among their
// compare options.
func HasCompareOption(annotations map[string]string, option string) bool {
	for item := range strings.SplitSeq(annotations[AnnotationCompareOptions], ",") {
		if strings.TrimSpace(item) == option {
			return true
		}
	}
	return false
}
