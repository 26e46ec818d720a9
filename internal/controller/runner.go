package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/project"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// runOperation runs the app's operation to its end, retrying as the retry
// strategy allows, and saves progress after every step.
func (r *Reconciler) runOperation(ctx context.Context, req opRequest) {
	app := req.app
	compared := false
	defer func() {
		r.runners.done(app.Name)
		if !compared {
			r.refreshes.mark(app.Name, normalRefresh)
		}
		r.enqueue(app.Namespace, app.Name)
	}()
	if !r.runners.acquire(ctx) {
		return
	}
	defer r.runners.release()
	log := logctx.From(ctx)
	op := *app.Operation
	opState := app.Status.OperationState
	resuming := opState != nil && opState.Phase == v1alpha1.OperationRunning && equalOperation(opState.Operation, op)
	if !resuming {
		opState = &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationRunning, StartedAt: metaNow(r.now())}
	}
	for {
		st := decodeState(opState)
		if !resuming {
			st = &wsync.State{}
		}
		out, err := r.syncOnce(ctx, req, opState, st)
		if errors.Is(err, context.Canceled) {
			log.Info("sync interrupted; a new controller resumes it")
			return
		}
		out.stopped = errors.Is(err, wsync.ErrStopped)
		if err != nil && !out.stopped {
			st.Phase, st.Message = v1alpha1.OperationFailed, err.Error()
		}
		if st.Phase == v1alpha1.OperationSucceeded || out.stopped || !r.retry(ctx, app, opState, st) {
			if closed(r.runners.stopChan(app.Name)) && !out.stopped {
				out.stopped = true
				st.Message = "stopped: superseded by a new revision while waiting to retry: " + st.Message
			}
			compared = r.finishOperation(ctx, req, opState, st, out)
			return
		}
		resuming = false
	}
}

// syncOutcome is what one sync attempt leaves behind.
type syncOutcome struct {
	// revision is the commit synced.
	revision string
	// applied are the objects the sync wrote, as the API server returned
	// them.
	applied []*unstructured.Unstructured
	// stopped: a new revision superseded the sync, which stopped at a
	// safe point.
	stopped bool
}

// syncOnce renders the app at the operation's revision and runs one sync.
func (r *Reconciler) syncOnce(ctx context.Context, req opRequest, opState *v1alpha1.OperationState, st *wsync.State) (syncOutcome, error) {
	var out syncOutcome
	app, tgt, s := req.app, req.target, req.settings
	op := opState.Operation.Sync
	if op == nil {
		op = &v1alpha1.SyncOperation{}
	}
	res, err := r.comparer.Render(ctx, tgt, compare.OperationTarget(app, op), &s.Settings, compare.RenderOptions{})
	if err != nil {
		return out, fmt.Errorf("render: %w", err)
	}
	revision := op.Revision
	if len(res.Revisions) > 0 {
		revision = res.Revisions[0]
	}
	out.revision = revision
	r.runners.syncing(app.Name, revision)
	desired, err := compare.PrepareDesired(tgt, app, res.Objects, &s.Settings)
	if err != nil {
		return out, err
	}
	if err := checkObjects(tgt, req.proj, desired); err != nil {
		return out, err
	}
	live, err := r.comparer.Live(ctx, tgt, app, s.TrackingOf(app.Name), compare.KindsOf(desired, app.Status.Resources))
	if err != nil {
		return out, err
	}
	desired, live = selectResources(op.Resources, desired, live)
	opts, err := r.syncOptions(tgt, app, op, s, revision)
	if err != nil {
		return out, err
	}
	progress := newProgressWriter(func(saved *wsync.State) { r.saveProgress(ctx, app, opState, saved, revision) })
	defer progress.stop()
	opts.OnProgress = progress.update
	opts.Checkpoint = progress.checkpoint
	opts.Stop = r.runners.stopChan(app.Name)
	if opts.Deadline, opts.DeadlineReason, err = operationDeadline(app, opState); err != nil {
		return out, err
	}
	plan, err := wsync.NewPlan(desired, live, opts)
	if err != nil {
		return out, err
	}
	exec, err := wsync.NewExecutor(tgt.Kube, plan, opts)
	if err != nil {
		return out, err
	}
	err = exec.Run(ctx, st)
	out.applied = plan.LiveObjects()
	if errors.Is(err, wsync.ErrAwaitingPruneConfirmation) {
		return out, fmt.Errorf("waiting for pruning confirmation: %w", err)
	}
	return out, err
}

func (r *Reconciler) syncOptions(tgt *destination.Target, app *v1alpha1.Application, op *v1alpha1.SyncOperation, s *Settings, revision string) (wsync.Options, error) {
	list := append(v1alpha1.SyncOptions{}, op.SyncOptions...)
	if app.Spec.SyncPolicy != nil {
		list = append(append(v1alpha1.SyncOptions{}, app.Spec.SyncPolicy.SyncOptions...), op.SyncOptions...)
	}
	so, err := wsync.ParseSyncOptions(list)
	if err != nil {
		return wsync.Options{}, err
	}
	allowEmpty := app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil && app.Spec.SyncPolicy.Automated.AllowEmpty
	return wsync.Options{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Revision: revision, Tracking: s.Tracking,
		InstallationID: s.InstallationID,
		Sync:           so, Prune: op.Prune, AllowEmpty: allowEmpty || !isAutomatedOp(app), DryRun: op.DryRun,
		SkipHooks: op.SyncStrategy != nil && op.SyncStrategy.Apply != nil,
		Health:    s.Assessor, WaveDelay: s.WaveDelay, ArgoParity: r.opts.ArgoParity, IgnoreDifferences: app.Spec.IgnoreDifferences,
		Scope: tgt.Kube, DryRuns: tgt.Predictions(), Namespaces: tgt,
		StallTimeout: s.StallTimeout, NodeProvisioners: r.provisioners.Find,
	}, nil
}

func isAutomatedOp(app *v1alpha1.Application) bool {
	return app.Operation != nil && app.Operation.InitiatedBy.Automated
}

// checkObjects applies the project's resource lists before anything is applied.
func checkObjects(tgt *destination.Target, proj *v1alpha1.AppProject, desired []*unstructured.Unstructured) error {
	for _, o := range desired {
		namespaced, err := tgt.Kube.IsNamespaced(o.GroupVersionKind().GroupKind())
		if err != nil {
			namespaced = o.GetNamespace() != ""
		}
		if err := project.ObjectPermitted(proj, o, namespaced); err != nil {
			return err
		}
	}
	return nil
}

// selectResources narrows a partial sync (--resource) to the chosen objects.
func selectResources(sel []v1alpha1.SyncOperationResource, desired, live []*unstructured.Unstructured) ([]*unstructured.Unstructured, []*unstructured.Unstructured) {
	if len(sel) == 0 {
		return desired, live
	}
	keep := func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			for _, s := range sel {
				if s.Group == gvk.Group && s.Kind == gvk.Kind && s.Name == o.GetName() && (s.Namespace == "" || s.Namespace == o.GetNamespace()) {
					out = append(out, o)
					break
				}
			}
		}
		return out
	}
	return keep(desired), keep(live)
}

func (r *Reconciler) saveProgress(ctx context.Context, app *v1alpha1.Application, opState *v1alpha1.OperationState, st *wsync.State, revision string) {
	opState.Phase = v1alpha1.OperationRunning
	opState.Message = st.Message
	opState.SyncResult = syncResult(st, revision, app)
	opState.WavecdState = encodeState(st)
	snapshot := opState.DeepCopy()
	err := r.saveState(ctx, app.Name, func(a *v1alpha1.Application) {
		a.Status.OperationState = snapshot
		markStalled(&a.Status, st, r.now())
	})
	if err != nil {
		logctx.From(ctx).Warn("save sync progress", "err", err)
	}
}

// retry decides whether a failed sync runs again, and waits the backoff.
// An attempt that failed while the API server was unreachable does not
// count: the next one starts as soon as the server answers, instead of
// spending the retries and growing the backoff during the outage (with
// no status written, a retry then looked stuck long after the server was
// back).
func (r *Reconciler) retry(ctx context.Context, app *v1alpha1.Application, opState *v1alpha1.OperationState, st *wsync.State) bool {
	if r.waitAPIServer(ctx, app) {
		return ctx.Err() == nil
	}
	limit, backoff := retryPolicy(opState.Operation.Retry, app)
	if limit >= 0 && opState.RetryCount >= limit {
		return false
	}
	if deadline, _, err := operationDeadline(app, opState); err != nil || !deadline.IsZero() && !r.now().Before(deadline) {
		return false // the operation timed out: no retry
	}
	wait := backoff.delay(opState.RetryCount)
	opState.RetryCount++
	if opState.Operation.Retry.Refresh && opState.Operation.Sync != nil {
		// As Argo CD's retry.refresh: the retry syncs the latest revision.
		opState.Operation.Sync.Revision, opState.Operation.Sync.Revisions = "", nil
	}
	opState.Phase = v1alpha1.OperationRunning
	opState.Message = fmt.Sprintf("Retrying attempt #%d at %s: %s", opState.RetryCount, r.now().Add(wait).Format("15:04:05"), st.Message)
	opState.WavecdState = nil
	snapshot := opState.DeepCopy()
	if err := r.saveState(ctx, app.Name, func(a *v1alpha1.Application) { a.Status.OperationState = snapshot }); err != nil {
		logctx.From(ctx).Warn("save retry", "err", err)
	}
	select {
	case <-ctx.Done():
		return false
	case <-r.runners.stopChan(app.Name):
		return false
	case <-time.After(wait):
		return true
	}
}

// operationDeadline is when the operation times out (wavecd.io/sync-timeout
// after it started, retries included), with the reason the sync gives;
// zero without a timeout.
func operationDeadline(app *v1alpha1.Application, opState *v1alpha1.OperationState) (time.Time, string, error) {
	timeout, err := application.SyncTimeout(app)
	if err != nil || timeout == 0 {
		return time.Time{}, "", err
	}
	reason := fmt.Sprintf("sync timeout %s (%s) reached", timeout, application.AnnotationSyncTimeout)
	return opState.StartedAt.Add(timeout), reason, nil
}

// closed reports whether ch is closed (false for nil).
func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// apiPollInterval is how often an unreachable API server is tried.
const apiPollInterval = time.Second

// waitAPIServer reports whether the API server was unreachable, having
// waited until it answers again (or ctx ends).
func (r *Reconciler) waitAPIServer(ctx context.Context, app *v1alpha1.Application) bool {
	reachable := func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := r.apiReader.Get(rctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{})
		return err == nil || apierrors.IsNotFound(err)
	}
	if reachable() {
		return false
	}
	logctx.From(ctx).Warn("the sync attempt failed with the API server unreachable; it does not count, and the next starts when the server answers")
	for ctx.Err() == nil && !reachable() {
		sleepCtx(ctx, apiPollInterval)
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// finishOperation records the final state, clears the operation, adds a
// history entry for a successful sync and, in the same write, the
// comparison that follows a sync: against the objects as the sync wrote
// them where the live cache has not caught up yet. It reports whether
// that write was made.
func (r *Reconciler) finishOperation(ctx context.Context, req opRequest, opState *v1alpha1.OperationState, st *wsync.State, out syncOutcome) bool {
	app := req.app
	now := metaNow(r.now())
	opState.FinishedAt = &now
	opState.Phase = v1alpha1.OperationFailed
	if st.Phase == v1alpha1.OperationSucceeded {
		opState.Phase = v1alpha1.OperationSucceeded
	}
	opState.Message = st.Message
	opState.SyncResult = syncResult(st, out.revision, app)
	opState.WavecdState = nil
	snapshot := opState.DeepCopy()
	err := r.saveState(ctx, app.Name, func(a *v1alpha1.Application) {
		a.Status.OperationState = snapshot
		a.Operation = nil
		markStalled(&a.Status, st, r.now())
		// A superseded sync has a history entry too: its first waves are
		// deployed, and the next entry is the revision that replaced it.
		if (snapshot.Phase == v1alpha1.OperationSucceeded || out.stopped) && !snapshot.Operation.Sync.DryRun {
			addHistory(a, snapshot, out.revision)
		}
		if err := r.compareInto(ctx, req.target, a, req.proj, req.settings, compare.CompareOptions{Applied: out.applied}); err == nil {
			r.compared.set(a.Name, a.Status.ReconciledAt.Time)
		}
	})
	if err != nil {
		logctx.From(ctx).Error("record sync result", "err", err)
	}
	r.metrics.ObserveSync(app, snapshot.Phase)
	logctx.From(ctx).Info("sync finished", "phase", snapshot.Phase, "message", snapshot.Message)
	return err == nil
}

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
