package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appstatus"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/project"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// Runner runs apps' sync operations.
type Runner struct {
	// Registry keeps the runner of each app.
	Registry *Registry
	// Targets renders and lists what each operation syncs.
	Targets Targets
	// Manifests gives an operation that carries its own objects
	// (operation.sync.manifests, a local sync) what it syncs.
	Manifests Targets
	// Status writes the operation state, as the controller's other
	// writes go.
	Status *appstatus.Writer
	// APIReader reads the API server itself: whether it answers.
	APIReader client.Reader
	// Namespace is the control namespace: apps elsewhere are known by
	// their instance name (application.Namespaces).
	Namespace string
	Now       func() time.Time
	// ArgoParity syncs as Argo CD does where wavecd differs.
	ArgoParity bool
	// ArgoCDCRD says the Application CRD is Argo CD's, which drops a
	// running sync's state and each resource's start and end times: the
	// runner writes neither (install.KeepsSyncState).
	ArgoCDCRD bool
	// NodeProvisioners tells a stall where the node provisioners are.
	NodeProvisioners wsync.NodeProvisionerFinder
	// Metrics counts the operations that end; nil (its methods take nil)
	// counts none.
	Metrics *metrics.Metrics
}

// Request is an operation to run and what it runs against.
type Request struct {
	// App holds the operation; the runner owns it.
	App      *v1alpha1.Application
	Project  *v1alpha1.AppProject
	Target   *destination.Target
	Settings *compare.Settings
	// WaveDelay is an extra pause between waves; StallTimeout how long a
	// wave may make no progress before it is examined as a stall.
	WaveDelay, StallTimeout time.Duration
}

// Targets gives an operation what it syncs: a compare.Comparer renders
// the app's sources, compare.Manifests decodes the objects a local sync
// carries.
type Targets interface {
	SyncTarget(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, op *v1alpha1.SyncOperation, s *compare.Settings) (*compare.SyncTarget, error)
}

// Host is what a running operation needs of the controller that started
// it.
type Host interface {
	// Compare refreshes app's comparison, in the operation's final write:
	// against applied (the objects as the sync wrote them) where the live
	// cache has not caught up.
	Compare(ctx context.Context, app *v1alpha1.Application, applied []*unstructured.Unstructured)
	// Ended is told that the runner returned; compared says whether its
	// final write, which compares the app, was made.
	Ended(app *v1alpha1.Application, compared bool)
}

// Run runs the app's operation to its end, retrying as the retry
// strategy allows, and saves progress after every step. The app's runner
// must be started (Registry.Start); Run records its end.
func (rn *Runner) Run(ctx context.Context, req Request, host Host) {
	app := req.App
	compared := false
	defer func() {
		rn.Registry.Done(rn.key(app))
		host.Ended(app, compared)
	}()
	if !rn.Registry.acquire(ctx) {
		return
	}
	defer rn.Registry.release()
	op := *app.Operation
	opState := app.Status.OperationState
	resuming := opState != nil && opState.Phase == v1alpha1.OperationRunning && EqualOperation(opState.Operation, op)
	if !resuming {
		opState = &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationRunning, StartedAt: metaNow(rn.Now())}
	}
	for {
		st := decodeState(opState)
		if !resuming {
			st = &wsync.State{}
		}
		out, err := rn.syncOnce(ctx, req, opState, st)
		if errors.Is(err, context.Canceled) {
			logctx.From(ctx).Info("sync interrupted; a new controller resumes it")
			return
		}
		out.stopped = errors.Is(err, wsync.ErrStopped)
		terminated := errors.Is(err, wsync.ErrTerminated) || closed(rn.Registry.terminateChan(rn.key(app)))
		if err != nil && !out.stopped && !errors.Is(err, wsync.ErrTerminated) {
			st.Phase, st.Message = v1alpha1.OperationFailed, err.Error()
		}
		if st.Phase == v1alpha1.OperationSucceeded || out.stopped || terminated || !rn.retry(ctx, app, opState, st) {
			if closed(rn.Registry.stopChan(rn.key(app))) && !out.stopped {
				out.stopped = true
				st.Message = "stopped: superseded by a new revision while waiting to retry: " + st.Message
			}
			compared = rn.finish(ctx, req, host, opState, st, out)
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
func (rn *Runner) syncOnce(ctx context.Context, req Request, opState *v1alpha1.OperationState, st *wsync.State) (syncOutcome, error) {
	var out syncOutcome
	app, tgt, s := req.App, req.Target, req.Settings
	op := opState.Operation.Sync
	if op == nil {
		op = &v1alpha1.SyncOperation{}
	}
	targets := rn.Targets
	if len(op.Manifests) > 0 {
		targets = rn.Manifests
	}
	target, err := targets.SyncTarget(ctx, tgt, app, req.Project, op, s)
	if err != nil {
		return out, err
	}
	revision := target.Revision
	out.revision = revision
	rn.Registry.syncing(rn.key(app), revision)
	desired, live := selectResources(op.Resources, target.Desired, target.Live)
	opts, err := rn.syncOptions(req, op, revision)
	if err != nil {
		return out, err
	}
	progress := newProgressWriter(func(saved *wsync.State) { rn.saveProgress(ctx, app, opState, saved, revision) })
	defer progress.stop()
	opts.OnProgress = progress.update
	opts.Checkpoint = progress.checkpoint
	opts.Stop = rn.Registry.stopChan(rn.key(app))
	opts.Terminate = rn.Registry.terminateChan(rn.key(app))
	if opts.Deadline, opts.DeadlineReason, err = deadline(app, opState); err != nil {
		return out, err
	}
	plan, err := wsync.NewPlan(desired, live, opts)
	if err != nil {
		return out, err
	}
	kube, err := writer(req)
	if err != nil {
		return out, err
	}
	exec, err := wsync.NewExecutor(kube, plan, opts)
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

// writer is the cluster a sync of req writes to: the destination as the
// service account its project gives when sync impersonation is on, or
// with the controller's own rights.
func writer(req Request) (*kube.Cluster, error) {
	imp, tgt := req.Settings.Impersonation, req.Target
	if !imp.Enabled {
		return tgt.Kube, nil
	}
	user, err := project.ServiceAccount(req.Project, req.App, tgt.Server)
	if err != nil {
		return nil, fmt.Errorf("failed to derive service account to impersonate: %w", err)
	}
	if user == "" {
		if imp.Enforced {
			return nil, fmt.Errorf("no matching service account found for destination server %s and namespace %s", tgt.Server, req.App.Spec.Destination.Namespace)
		}
		return tgt.Kube, nil
	}
	return tgt.Kube.Impersonating(user)
}

// syncOptions are the sync engine's options for req's operation op.
func (rn *Runner) syncOptions(req Request, op *v1alpha1.SyncOperation, revision string) (wsync.Options, error) {
	app, tgt, s := req.App, req.Target, req.Settings
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
		AppName: s.TrackingOf(app).AppName, Namespace: app.Spec.Destination.Namespace, Revision: revision, Tracking: s.Tracking,
		InstallationID: s.InstallationID,
		Sync:           so, Prune: op.Prune, AllowEmpty: allowEmpty || !automated(app), DryRun: op.DryRun,
		SkipHooks: op.SyncStrategy != nil && op.SyncStrategy.Apply != nil,
		Health:    s.Assessor, WaveDelay: req.WaveDelay, ArgoParity: rn.ArgoParity, IgnoreDifferences: app.Spec.IgnoreDifferences,
		Scope: tgt.Kube, DryRuns: tgt.Predictions(), Namespaces: tgt,
		StallTimeout: req.StallTimeout, NodeProvisioners: rn.NodeProvisioners,
		Permitted: func(obj *unstructured.Unstructured, namespaced bool) error {
			return project.ObjectPermitted(req.Project, obj, namespaced)
		},
	}, nil
}

// automated says the app's operation is an automated sync.
func automated(app *v1alpha1.Application) bool {
	return app.Operation != nil && app.Operation.InitiatedBy.Automated
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
