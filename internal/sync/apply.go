package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
