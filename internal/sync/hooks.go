package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

var phaseOrder = map[v1alpha1.SyncPhase]int{v1alpha1.SyncPhasePreSync: -1, v1alpha1.SyncPhaseSync: 0, v1alpha1.SyncPhasePostSync: 1, v1alpha1.SyncPhaseSyncFail: 2}

// Annotations of hooks.
const (
	// FinalizerHook keeps a hook until its result has been read.
	FinalizerHook = hook.Finalizer
	// AnnotationSyncID marks a hook with the sync that created it, so a
	// resumed sync adopts it instead of creating it again.
	AnnotationSyncID = "wavecd.io/sync-id"
)

// hookPhases returns the sync phases a hook runs in, in phase order.
func hookPhases(obj *unstructured.Unstructured) []v1alpha1.SyncPhase {
	var out []v1alpha1.SyncPhase
	for _, t := range hook.SyncPhases(obj) {
		out = append(out, v1alpha1.SyncPhase(t))
	}
	return out
}

// hookName returns the name of a hook that only has a generateName, the way
// Argo CD forms it: generateName + <revision[:7]>-<phase>-<start unix time>.
// syncID stands in for an empty revision.
func hookName(generateName, revision, syncID string, phase v1alpha1.SyncPhase, startedUnix int64) string {
	if len(revision) > 7 {
		revision = revision[:7]
	}
	if revision == "" {
		revision = syncID
	}
	return generateName + strings.ToLower(fmt.Sprintf("%s-%s-%d", revision, phase, startedUnix))
}

// deleteBeforeCreation prepares the hooks of a step: a hook this sync
// already created (a resumed sync) is adopted and waited on; a hook of an
// earlier sync with the BeforeHookCreation policy is deleted, and the step
// waits until it is gone before creating the new one.
func (e *Executor) deleteBeforeCreation(ctx context.Context, st *State, idx []int) error {
	var gone []kube.Ref
	for _, i := range idx {
		ts, t := &st.Tasks[i], e.task(st, i)
		ref := kube.Ref{GVK: t.Ref().GVK, Namespace: ts.Namespace, Name: ts.Name}
		live, err := e.cluster.GetOptional(ctx, ref)
		if err != nil {
			return err
		}
		switch {
		case live == nil:
		case live.GetAnnotations()[AnnotationSyncID] == st.ID:
			t.Live = live
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskRunning, v1alpha1.ResultCodeSynced, strings.ToLower(ts.Kind)+"/"+ts.Name+" created"
		case slices.Contains(t.DeletePolicies, hook.BeforeHookCreation):
			if err := e.deleteHook(ctx, ref); err != nil {
				ts.Phase, ts.Result, ts.Message = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed, err.Error()
				continue
			}
			gone = append(gone, ref)
			e.events.add(ctx, Event{Type: EventHookDeleted, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: "before hook creation"})
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return e.waitGone(ctx, gone)
}

// deleteHook removes the hook finalizer and deletes the hook.
func (e *Executor) deleteHook(ctx context.Context, ref kube.Ref) error {
	if err := e.cluster.RemoveFinalizer(ctx, ref, FinalizerHook); err != nil {
		return err
	}
	return e.cluster.Delete(ctx, ref, kube.DeleteOptions{Propagation: e.opts.Sync.PrunePropagationPolicy})
}

// deleteFinishedHooks deletes, at the end of a sync, the hooks whose delete
// policy matches their result: HookSucceeded for a hook that succeeded,
// HookFailed for one that failed.
func (e *Executor) deleteFinishedHooks(ctx context.Context, st *State) {
	for i := range st.Tasks {
		ts, t := &st.Tasks[i], e.task(st, i)
		if ts.Type != v1alpha1.TaskHook || t == nil {
			continue
		}
		if !(ts.Phase == v1alpha1.TaskSucceeded && slices.Contains(t.DeletePolicies, hook.HookSucceeded)) &&
			!(ts.Phase == v1alpha1.TaskFailed && slices.Contains(t.DeletePolicies, hook.HookFailed)) {
			continue
		}
		ref := kube.Ref{GVK: t.Ref().GVK, Namespace: ts.Namespace, Name: ts.Name}
		if err := e.deleteHook(ctx, ref); err != nil {
			ts.Message = strings.TrimSpace(ts.Message + "; failed to delete: " + err.Error())
			continue
		}
		e.events.add(ctx, Event{Type: EventHookDeleted, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: "delete policy"})
	}
}

// Terminate stops a running sync: running hooks are read a last time,
// released from the hook finalizer and deleted, and the sync fails with
// "Operation terminated".
func (e *Executor) Terminate(ctx context.Context, st *State) error {
	st.Phase = v1alpha1.OperationTerminating
	var errs []error
	for i := range st.Tasks {
		ts, t := &st.Tasks[i], e.task(st, i)
		if ts.Type != v1alpha1.TaskHook || ts.Phase != v1alpha1.TaskRunning || t == nil {
			continue
		}
		ref := kube.Ref{GVK: t.Ref().GVK, Namespace: ts.Namespace, Name: ts.Name}
		if err := e.deleteHook(ctx, ref); err != nil {
			errs = append(errs, err)
			continue
		}
		ts.Phase, ts.Message = v1alpha1.TaskFailed, "Terminated"
	}
	if err := errors.Join(errs...); err != nil {
		st.Message = "Operation termination had errors: " + err.Error()
		e.progress(st)
		return err
	}
	now := time.Now().UTC()
	st.Phase, st.Message, st.FinishedAt = v1alpha1.OperationFailed, "Operation terminated", &now
	e.progress(st)
	return nil
}
