package sync

import (
	"context"
	"maps"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
)

// dryRun checks every task before anything is applied; one failure fails
// the sync with nothing applied. With ApplyOutOfSyncOnly the server-side
// diff is the dry run, and tasks in sync are skipped.
func (e *Executor) dryRun(ctx context.Context, st *State) error {
	if i, ok := e.loneWrite(st); ok {
		ts := &st.Tasks[i]
		ts.Phase = v1alpha1.TaskDryRunOK
		e.events.add(ctx, Event{Type: EventDryRun, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID,
			Message: "skipped: the sync writes this object only, and its apply checks it"})
		st.DryRunDone = true
		return nil
	}
	skips, err := e.dryRunSkips(ctx, st)
	if err != nil {
		return err
	}
	check := e.creationCheck(st, allIndices(st))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.Concurrency)
	for i := range st.Tasks {
		ts, t := &st.Tasks[i], e.task(st, i)
		if t == nil || started(ts.Phase) || ts.Type == v1alpha1.TaskPrune || ts.Type == v1alpha1.TaskNamespace {
			continue
		}
		if t.Err != "" {
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed, t.Err
			continue
		}
		if skip, ok := skips[ts.ID]; ok {
			ts.Phase, ts.Message = v1alpha1.TaskDryRunOK, skip.reason
			ts.DryRunAtWave = skip.crdInSync && !e.opts.ArgoParity
			continue
		}
		g.Go(func() error {
			phase, message := e.dryRunOne(gctx, st, i, check)
			mu.Lock()
			defer mu.Unlock()
			ts.Phase, ts.Message = phase, message
			if phase == v1alpha1.TaskFailed {
				ts.Result = v1alpha1.ResultCodeSyncFailed
			}
			return nil
		})
	}
	_ = g.Wait()
	if failed := failedTasks(st, allIndices(st)); len(failed) > 0 {
		return e.finish(ctx, st, v1alpha1.OperationFailed, failureMessage("one or more objects failed to apply (dry run)", st, failed))
	}
	st.DryRunDone = true
	if e.opts.DryRun {
		e.completeDryRun(st)
		return e.finish(ctx, st, v1alpha1.OperationSucceeded, "successfully synced (dry run)")
	}
	return nil
}

// loneWrite reports whether the sync creates one object and does
// nothing else (no hook, no prune), and which task that is. Its dry run
// would check what the creation itself checks, with nothing written
// before it, and either failing leaves the cluster as it was: the dry run
// is skipped, saving a request. Not in a dry-run sync, with Argo CD
// parity, or with ApplyOutOfSyncOnly (whose dry run is the diff).
func (e *Executor) loneWrite(st *State) (int, bool) {
	if e.opts.DryRun || e.opts.ArgoParity || e.opts.Sync.ApplyOutOfSyncOnly {
		return -1, false
	}
	lone := -1
	for i := range st.Tasks {
		ts := &st.Tasks[i]
		switch {
		case ts.Type == v1alpha1.TaskNamespace:
			continue
		case ts.Type != v1alpha1.TaskApply || lone >= 0 || started(ts.Phase):
			return -1, false
		}
		lone = i
	}
	if lone < 0 {
		return -1, false
	}
	t := e.task(st, lone)
	if t == nil || t.Object == nil || t.Live != nil || t.Err != "" {
		return -1, false
	}
	return lone, true
}

func allIndices(st *State) []int {
	out := make([]int, len(st.Tasks))
	for i := range out {
		out[i] = i
	}
	return out
}

// dryRunOne dry-runs one task; with ApplyOutOfSyncOnly an object in sync is
// skipped. check, when set, answers for creations the schema alone decides.
func (e *Executor) dryRunOne(ctx context.Context, st *State, i int, check *kube.CreationCheck) (v1alpha1.TaskPhase, string) {
	ts, t := &st.Tasks[i], e.task(st, i)
	obj := e.objectFor(st, i)
	if e.opts.Sync.ApplyOutOfSyncOnly && ts.Type == v1alpha1.TaskApply && t.Live != nil {
		res, err := diff.Compare(ctx, obj, t.Live, diff.Options{Predictor: e.predictor(t), Ignore: e.opts.IgnoreDifferences})
		e.events.add(ctx, Event{Type: EventDryRun, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: string(res.Status)})
		switch {
		case err != nil:
			return v1alpha1.TaskFailed, err.Error()
		case res.Status == diff.Synced:
			return v1alpha1.TaskSkipped, "already in sync"
		}
		return v1alpha1.TaskDryRunOK, ""
	}
	opts := e.applyOptions(t, true)
	if ts.Type == v1alpha1.TaskApply && !opts.Force && e.opts.DryRuns != nil && e.opts.DryRuns.Succeeded(obj, t.Live, opts.Mode) {
		e.events.add(ctx, Event{Type: EventDryRun, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: "known from the last comparison"})
		return v1alpha1.TaskDryRunOK, ""
	}
	if ts.Type == v1alpha1.TaskApply && check != nil && t.Live == nil {
		o := opts
		o.Known, o.Live = true, nil
		if check.Valid(ctx, obj, o) {
			e.events.add(ctx, Event{Type: EventDryRun, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: checkedLocally})
			return v1alpha1.TaskDryRunOK, ""
		}
	}
	if ts.Type == v1alpha1.TaskHook {
		// A hook is always created afresh (an earlier one is deleted first):
		// dry-run a creation under a generated name.
		obj = obj.DeepCopy()
		obj.SetGenerateName(obj.GetName()[:min(len(obj.GetName()), 50)] + "-")
		obj.SetName("")
		opts.Mode, opts.Force = kube.Create, false
	} else {
		opts.Known, opts.Live = true, t.Live
	}
	_, err := e.applyAdmitted(ctx, obj, opts)
	if err != nil {
		e.events.add(ctx, Event{Type: EventDryRunFailed, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: err.Error()})
		return v1alpha1.TaskFailed, err.Error()
	}
	e.events.add(ctx, Event{Type: EventDryRun, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID})
	return v1alpha1.TaskDryRunOK, ""
}

// predictor is the dry-run apply a server-side diff of t compares with.
func (e *Executor) predictor(t *Task) diff.Predictor {
	return diff.PredictorFunc(func(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return e.cluster.Apply(ctx, obj, e.applyOptions(t, true))
	})
}

// dryRunSkip is why a task's dry run cannot run before the sync starts.
type dryRunSkip struct {
	reason string
	// crdInSync: the task's kind comes with a CRD of this sync.
	crdInSync bool
}

// dryRunSkips returns the tasks whose dry run cannot run yet, with the
// reason: their kind comes with a CRD of this sync (or is missing and
// SkipDryRunOnMissingResource is set), or their namespace is created by it.
func (e *Executor) dryRunSkips(ctx context.Context, st *State) (map[string]dryRunSkip, error) {
	crds, namespaces := map[string]bool{}, map[string]bool{}
	for _, t := range e.plan.Tasks {
		if t.Object == nil {
			continue
		}
		if gk, ok := kube.CRDGroupKind(t.Object); ok && kube.IsCRD(t.Object) {
			crds[gk.String()] = true
		}
		if isNamespace(t.Object) {
			namespaces[t.Object.GetName()] = true
		}
	}
	exists := map[string]bool{}
	maps.Copy(exists, e.namespaces)
	for ns := range maps.Keys(namespaces) {
		if exists[ns] {
			continue
		}
		live, err := e.cluster.GetOptional(ctx, kube.Ref{GVK: nsGVK, Name: ns})
		if err != nil {
			return nil, err
		}
		exists[ns] = live != nil
	}
	out := map[string]dryRunSkip{}
	for i, ts := range st.Tasks {
		t := e.task(st, i)
		if t == nil || t.Object == nil || ts.Type == v1alpha1.TaskNamespace {
			continue
		}
		gk := t.GroupKind()
		if _, err := e.cluster.Mapping(t.Ref().GVK); meta.IsNoMatchError(err) && (crds[gk.String()] || t.Settings.SkipDryRunOnMissingResource) {
			out[ts.ID] = dryRunSkip{reason: "dry run skipped: the kind " + gk.String() + " is not known to the cluster yet", crdInSync: crds[gk.String()]}
			continue
		}
		if ns := ts.Namespace; ns != "" && namespaces[ns] && !exists[ns] {
			out[ts.ID] = dryRunSkip{reason: "dry run skipped: namespace " + ns + " is created by this sync"}
		}
	}
	return out, nil
}

// dryRunStep dry-runs, as their step starts, the custom resources whose
// CRD an earlier step applied (DryRunAtWave): the step's objects are
// checked before any of them is written, as the whole sync's were. One
// whose kind is still unknown (its CRD comes in this step) is applied
// without. It reports whether every dry run passed.
func (e *Executor) dryRunStep(ctx context.Context, st *State, step []int) bool {
	var due []int
	for _, i := range step {
		ts := &st.Tasks[i]
		if !ts.DryRunAtWave || started(ts.Phase) || e.task(st, i) == nil {
			continue
		}
		if _, err := e.cluster.Mapping(e.task(st, i).Ref().GVK); meta.IsNoMatchError(err) {
			continue
		}
		due = append(due, i)
	}
	ok, check := true, e.creationCheck(st, due)
	for _, i := range due {
		ts := &st.Tasks[i]
		ts.DryRunAtWave = false
		phase, message := e.dryRunOne(ctx, st, i, check)
		ts.Phase, ts.Message = phase, message
		if phase == v1alpha1.TaskFailed {
			ts.Result, ok = v1alpha1.ResultCodeSyncFailed, false
		}
	}
	return ok
}

// completeDryRun records what a real sync would have done.
func (e *Executor) completeDryRun(st *State) {
	for i := range st.Tasks {
		ts, t := &st.Tasks[i], e.task(st, i)
		switch {
		case ts.Phase.Terminal():
		case ts.Type == v1alpha1.TaskPrune && t != nil:
			ts.Phase = v1alpha1.TaskSucceeded
			ts.Result, ts.Message = e.pruneVerdict(t)
			if ts.Result == v1alpha1.ResultCodePruned {
				ts.Message = "pruned (dry run)"
			}
		case ts.SyncPhase == v1alpha1.SyncPhaseSyncFail:
			ts.Phase = v1alpha1.TaskSkipped
		default:
			// What kubectl says of a dry run: "configmap/x configured (dry run)".
			ts.Phase, ts.Result = v1alpha1.TaskSucceeded, v1alpha1.ResultCodeSynced
			msg := ts.Message
			if msg == "" && t != nil {
				msg = applyMessage(e.objectFor(st, i), t)
			}
			ts.Message = strings.TrimSpace(msg + " (dry run)")
		}
	}
}

// checkedLocally is the dry-run event of a creation the CRD's schema
// alone decides (kube.CreationCheck).
const checkedLocally = "checked against its CRD's schema: no webhook, policy or quota applies"

// minLocalChecks is the number of creations from which a dry run checks
// custom resources locally: the facts it reads first (the CRDs, the
// webhooks and policies, the namespace, its quotas, an access review)
// cost about as many requests as this many dry runs.
const minLocalChecks = 10

// creationCheck returns a check of this pass's creations, nil when the
// pass creates too few objects for it to save requests. Each pass reads
// its facts afresh: an earlier step may have added a webhook or a quota.
func (e *Executor) creationCheck(st *State, idx []int) *kube.CreationCheck {
	n := 0
	for _, i := range idx {
		if t := e.task(st, i); t != nil && t.Object != nil && t.Live == nil && st.Tasks[i].Type == v1alpha1.TaskApply {
			n++
		}
	}
	if n < minLocalChecks {
		return nil
	}
	return e.cluster.CreationCheck()
}
