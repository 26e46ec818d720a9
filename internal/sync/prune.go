package sync

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

var nsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// pruneVerdict says what a prune of t does before anything is deleted:
// skipped (pruning off, or Prune=false) or pruned.
func (e *Executor) pruneVerdict(t *Task) (v1alpha1.ResultCode, string) {
	switch {
	case !e.opts.Prune:
		return v1alpha1.ResultCodePruneSkipped, "ignored (requires pruning)"
	case t.PruneOption == "false":
		return v1alpha1.ResultCodePruneSkipped, "ignored (no prune)"
	}
	return v1alpha1.ResultCodePruned, "pruned"
}

// prune deletes the objects of prune tasks idx with the propagation policy
// of PrunePropagationPolicy; the step then waits until they are gone. An
// object marked Prune=confirm stops the sync until the prune is confirmed.
func (e *Executor) prune(ctx context.Context, st *State, idx []int) error {
	if err := e.confirmation(st, idx); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(e.opts.Concurrency)
	for _, i := range idx {
		ts, t := &st.Tasks[i], e.task(st, i)
		code, message := e.pruneVerdict(t)
		event := Event{SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: message}
		if code == v1alpha1.ResultCodePruneSkipped {
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskSucceeded, code, message
			e.events.add(ctx, withType(event, EventPruneSkipped))
			continue
		}
		e.events.add(ctx, withType(event, EventPrune))
		g.Go(func() error {
			if t.Live.GetDeletionTimestamp() == nil {
				err := e.cluster.Delete(ctx, t.Ref(), kube.DeleteOptions{Propagation: e.opts.Sync.PrunePropagationPolicy})
				if err != nil {
					ts.Phase, ts.Result, ts.Message = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed, err.Error()
					return nil //nolint:nilerr // the task's failure is its result; the other prunes go on
				}
			}
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskRunning, v1alpha1.ResultCodePruned, message
			return nil
		})
	}
	_ = g.Wait()
	return nil
}

// confirmation returns ErrAwaitingPruneConfirmation when a prune of idx
// needs a confirmation that was not given.
func (e *Executor) confirmation(st *State, idx []int) error {
	if !e.opts.Prune || e.opts.PruneConfirmed {
		return nil
	}
	var waiting []string
	for _, i := range idx {
		if t := e.task(st, i); t.PruneOption == "confirm" {
			ts := st.Tasks[i]
			waiting = append(waiting, fmt.Sprintf("%s/%s/%s", ts.Version, ts.Kind, ts.Name))
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	more := ""
	if len(waiting) > 1 {
		more = fmt.Sprintf(" and %d more resources", len(waiting)-1)
	}
	st.Message = fmt.Sprintf("waiting for pruning confirmation of %s%s", waiting[0], more)
	return ErrAwaitingPruneConfirmation
}
