package sync

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
)

// crdTimeout bounds the wait for a new CRD to be established.
const crdTimeout = 30 * time.Second

// prepare completes the plan's tasks before running: the live objects that
// FailOnSharedResource, ApplyOutOfSyncOnly and RespectIgnoreDifferences need,
// and ignored fields set to their live values.
func (e *Executor) prepare(ctx context.Context, st *State) error {
	o := e.opts.Sync
	if !o.FailOnSharedResource && !o.ApplyOutOfSyncOnly && !o.RespectIgnoreDifferences {
		return nil
	}
	var missing []*Task
	for _, t := range e.plan.Tasks {
		if t.Type == v1alpha1.TaskApply && t.Live == nil {
			missing = append(missing, t)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.Concurrency)
	for _, t := range missing {
		g.Go(func() error {
			live, err := e.cluster.GetOptional(gctx, t.Ref())
			t.Live = live
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("read live objects: %w", err)
	}
	for _, t := range e.plan.Tasks {
		if t.Type != v1alpha1.TaskApply || t.Live == nil {
			continue
		}
		if owner := e.tracking.Owner(t.Live); o.FailOnSharedResource && owner != "" && owner != e.opts.AppName && !st.DryRunDone {
			t.Err = fmt.Sprintf("%s is already managed by application %q (FailOnSharedResource)", t.Ref(), owner)
		}
		if o.RespectIgnoreDifferences {
			obj, err := diff.RespectIgnored(t.Object, t.Live, e.opts.IgnoreDifferences)
			if err != nil {
				return fmt.Errorf("respect ignored differences of %s: %w", t.Ref(), err)
			}
			t.Object = obj
		}
	}
	return nil
}

// createNamespace creates the destination namespace (CreateNamespace)
// before the dry run, as Argo CD does; one that exists is left as it is.
// A creation that finds the namespace there costs what a read would.
func (e *Executor) createNamespace(ctx context.Context, st *State) error {
	i := slices.IndexFunc(st.Tasks, func(t TaskState) bool { return t.Type == v1alpha1.TaskNamespace && !t.Phase.Terminal() })
	ts, t := &st.Tasks[i], e.task(st, i)
	if t == nil {
		ts.Phase = v1alpha1.TaskSkipped
		return nil
	}
	if e.opts.DryRun {
		live, err := e.cluster.GetOptional(ctx, t.Ref())
		switch {
		case err != nil:
			return err
		case live != nil:
			ts.Phase = v1alpha1.TaskSkipped
		default:
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskSucceeded, v1alpha1.ResultCodeSynced, "namespace/"+ts.Name+" created (dry run)"
		}
		return nil
	}
	if e.opts.Namespaces != nil && e.opts.Namespaces.NamespaceExists(ctx, ts.Name) {
		ts.Phase = v1alpha1.TaskSkipped
		e.namespaces = map[string]bool{ts.Name: true}
		return nil
	}
	_, err := e.cluster.Apply(ctx, t.Object, kube.ApplyOptions{Mode: kube.Create})
	switch {
	case err == nil:
		ts.Phase, ts.Result, ts.Message = v1alpha1.TaskSucceeded, v1alpha1.ResultCodeSynced, "namespace/"+ts.Name+" created"
		e.events.add(ctx, Event{Type: EventNamespace, SyncPhase: ts.SyncPhase, Task: ts.ID})
	case e.namespaceExists(ctx, t, err):
		ts.Phase = v1alpha1.TaskSkipped
	default:
		ts.Phase, ts.Result, ts.Message = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed, err.Error()
		return e.finish(ctx, st, v1alpha1.OperationFailed, "the namespace failed to apply: "+err.Error())
	}
	e.namespaces = map[string]bool{ts.Name: true}
	return nil
}

// namespaceExists reports whether a creation of t's namespace failed
// because it exists. One may read namespaces without the right to create
// them: a forbidden creation is followed by a read.
func (e *Executor) namespaceExists(ctx context.Context, t *Task, createErr error) bool {
	if apierrors.IsAlreadyExists(createErr) {
		return true
	}
	if !apierrors.IsForbidden(createErr) {
		return false
	}
	live, err := e.cluster.GetOptional(ctx, t.Ref())
	return err == nil && live != nil
}

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
			phase, message := e.dryRunOne(gctx, st, i)
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
// skipped.
func (e *Executor) dryRunOne(ctx context.Context, st *State, i int) (v1alpha1.TaskPhase, string) {
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
	ok := true
	for _, i := range step {
		ts := &st.Tasks[i]
		if !ts.DryRunAtWave || started(ts.Phase) || e.task(st, i) == nil {
			continue
		}
		if _, err := e.cluster.Mapping(e.task(st, i).Ref().GVK); meta.IsNoMatchError(err) {
			continue
		}
		ts.DryRunAtWave = false
		phase, message := e.dryRunOne(ctx, st, i)
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
			ts.Phase, ts.Result = v1alpha1.TaskSucceeded, v1alpha1.ResultCodeSynced
			ts.Message = strings.TrimSpace(ts.Message + " (dry run)")
		}
	}
}

// applyOptions are the kube write options of t.
func (e *Executor) applyOptions(t *Task, dryRun bool) kube.ApplyOptions {
	return kube.ApplyOptions{
		Mode:           t.Settings.Mode,
		Force:          t.Settings.Force,
		DryRun:         dryRun,
		SkipValidation: t.Settings.SkipValidation,
	}
}

// objectFor returns the object task i writes: a hook gets its generated
// name, tracking, the hook finalizer and the sync's id.
func (e *Executor) objectFor(st *State, i int) *unstructured.Unstructured {
	ts, t := &st.Tasks[i], e.task(st, i)
	if ts.Type != v1alpha1.TaskHook {
		return t.Object
	}
	obj := t.Object.DeepCopy()
	obj.SetName(ts.Name)
	obj.SetGenerateName("")
	e.tracking.Set(obj)
	if !slices.Contains(obj.GetFinalizers(), FinalizerHook) {
		obj.SetFinalizers(append(obj.GetFinalizers(), FinalizerHook))
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationSyncID] = st.ID
	obj.SetAnnotations(annotations)
	return obj
}

// applyKinds writes tasks in order, one kind at a time; the tasks of one
// kind are written in parallel.
func (e *Executor) applyKinds(ctx context.Context, st *State, idx []int) {
	for len(idx) > 0 {
		kind := st.Tasks[idx[0]].Kind
		n := 1
		for n < len(idx) && st.Tasks[idx[n]].Kind == kind {
			n++
		}
		group := idx[:n]
		idx = idx[n:]
		var g errgroup.Group
		g.SetLimit(e.opts.Concurrency)
		for _, i := range group {
			g.Go(func() error { e.applyOne(ctx, st, i); return nil })
		}
		_ = g.Wait()
	}
}

// applyOne writes one object or creates one hook.
func (e *Executor) applyOne(ctx context.Context, st *State, i int) {
	ts, t := &st.Tasks[i], e.task(st, i)
	obj := e.objectFor(st, i)
	event := Event{SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID}
	e.events.add(ctx, withType(event, EventApply))
	opts := e.applyOptions(t, false)
	opts.Known = t.Live == nil && ts.Type == v1alpha1.TaskApply // planned as a creation
	out, err := e.applyAdmitted(ctx, obj, opts)
	if err == nil && kube.IsCRD(obj) {
		err = e.cluster.WaitEstablished(ctx, obj.GetName(), crdTimeout)
	}
	if err != nil {
		ts.Phase, ts.Result, ts.Message = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed, err.Error()
		event.Message = err.Error()
		e.events.add(ctx, withType(event, EventApplyFailed))
		return
	}
	ts.Result = v1alpha1.ResultCodeSynced
	ts.Message = applyMessage(obj, t)
	if out != nil && !diff.ReadsManagedFields(e.opts.IgnoreDifferences) {
		// Kept until the sync ends (its waits, the comparison after it),
		// as the controller's caches keep objects: without managedFields,
		// nearly half of a small object's answer.
		out.SetManagedFields(nil)
	}
	t.Live, t.Applied = out, true
	if ts.Type == v1alpha1.TaskApply && e.opts.DryRuns != nil && out != nil && out.GetResourceVersion() != "" {
		e.opts.DryRuns.Applied(t.Object, out, t.Settings.Mode)
	}
	ts.Phase = v1alpha1.TaskApplied
	if ts.Type == v1alpha1.TaskHook {
		ts.Phase = v1alpha1.TaskRunning
	}
	e.events.add(ctx, withType(event, EventApplied))
}

func withType(e Event, t EventType) Event {
	e.Type = t
	return e
}

// applyMessage says what was done, the way kubectl does.
func applyMessage(obj *unstructured.Unstructured, t *Task) string {
	verb := "configured"
	switch {
	case t.Type == v1alpha1.TaskHook:
		verb = "created"
	case t.Settings.Mode == kube.ServerSideApply:
		verb = "serverside-applied"
	case t.Live == nil:
		verb = "created"
	case t.Settings.Mode == kube.Replace:
		verb = "replaced"
	}
	msg := strings.ToLower(obj.GetKind()) + "/" + obj.GetName() + " " + verb
	if n := t.Settings.LastAppliedSize; n > 0 {
		msg += fmt.Sprintf(" (%s: its last-applied configuration of %d KiB passes the %d KiB the API server allows for annotations)",
			TooLargeForClientSide, (n+1023)/1024, kube.MaxAnnotationsSize/1024)
	}
	return msg
}

// TooLargeForClientSide is how the message of an object applied
// server-side for its size says so.
const TooLargeForClientSide = "too large for client-side apply"
