package operation

import (
	"context"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// finish records the final state, clears the operation, adds a history
// entry for a successful sync and, in the same write, the comparison
// that follows a sync (host.Compare): against the objects as the sync
// wrote them where the live cache has not caught up yet. It reports
// whether that write was made.
func (rn *Runner) finish(ctx context.Context, req Request, host Host, opState *v1alpha1.OperationState, st *wsync.State, out syncOutcome) bool {
	app := req.App
	now := metaNow(rn.Now())
	opState.FinishedAt = &now
	opState.Phase = v1alpha1.OperationFailed
	if st.Phase == v1alpha1.OperationSucceeded {
		opState.Phase = v1alpha1.OperationSucceeded
	}
	opState.Message = st.Message
	opState.SyncResult = rn.syncResult(st, out.revision, app)
	opState.WavecdState = nil
	snapshot := opState.DeepCopy()
	err := rn.save(ctx, app, func(a *v1alpha1.Application) {
		a.Status.OperationState = snapshot
		a.Operation = nil
		markStalled(&a.Status, st, rn.Now())
		if recordsHistory(snapshot, out.stopped) {
			addHistory(a, snapshot, out.revision)
		}
		host.Compare(ctx, a, out.applied)
	})
	if err != nil {
		logctx.From(ctx).Error("record sync result", "err", err)
	}
	rn.Metrics.ObserveSync(app, snapshot.Phase)
	logctx.From(ctx).Info("sync finished", "phase", snapshot.Phase, "message", snapshot.Message)
	return err == nil
}

// recordsHistory says whether a finished sync gets a history entry: a
// successful one does, and so does a superseded one (its first waves are
// deployed, and the next entry is the revision that replaced it); a dry
// run and a sync of some resources only do not, as in Argo CD.
func recordsHistory(op *v1alpha1.OperationState, superseded bool) bool {
	sync := op.Operation.Sync
	return (op.Phase == v1alpha1.OperationSucceeded || superseded) && sync != nil && !sync.DryRun && len(sync.Resources) == 0
}

// addHistory adds the operation's entry to the app's history, keeping
// revisionHistoryLimit entries (10 by default).
func addHistory(a *v1alpha1.Application, opState *v1alpha1.OperationState, revision string) {
	var id int64
	if n := len(a.Status.History); n > 0 {
		id = a.Status.History[n-1].ID + 1
	}
	entry := v1alpha1.RevisionHistory{
		Revision: revision, DeployedAt: *opState.FinishedAt, ID: id, DeployStartedAt: &opState.StartedAt,
		Sources: a.Spec.Sources, InitiatedBy: opState.Operation.InitiatedBy,
	}
	if a.Spec.Source != nil {
		entry.Source = *a.Spec.Source
	}
	// A rollback records the source it synced, not the app's.
	if op := opState.Operation.Sync; op != nil && op.Source != nil && a.Spec.Source != nil {
		entry.Source = *op.Source
	} else if op != nil && len(op.Sources) > 0 && a.Spec.HasMultipleSources() {
		entry.Sources = op.Sources
	}
	a.Status.History = append(a.Status.History, entry)
	limit := int64(10)
	if a.Spec.RevisionHistoryLimit != nil {
		limit = *a.Spec.RevisionHistoryLimit
	}
	if over := int64(len(a.Status.History)) - limit; over > 0 {
		a.Status.History = a.Status.History[over:]
	}
}
