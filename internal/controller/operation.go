package controller

import (
	"context"
	stdsync "sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/appstatus"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/operation"
)

// starter decides whether an app's operation runs now (an automated sync
// due, a sync window or a dependency holding it back, a new revision
// superseding the running one) and starts its runner.
type starter struct {
	client     client.Client
	apiReader  client.Reader
	status     *appstatus.Writer
	runs       *operation.Registry
	runner     *operation.Runner
	argoParity bool
	now        func() time.Time
	life       *lifetime
	// enqueue reconciles an app again.
	enqueue func(namespace, name string)
	// key is an app's key in the controller's state.
	key func(app *v1alpha1.Application) string
	// host is the controller as req's operation sees it.
	host func(req opRequest) operation.Host
}

// lifetime is the controller's lifetime context: sync runners stop with
// the controller (their state is saved, and the next one resumes).
type lifetime struct {
	mu  stdsync.Mutex
	ctx context.Context //nolint:containedctx // the controller's lifetime, for sync runners
}

func (l *lifetime) set(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ctx = ctx
}

// context is the controller's lifetime context; Background before it
// starts.
func (l *lifetime) context() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil {
		return context.Background()
	}
	return l.ctx
}

// opRequest is what deciding on and starting an app's sync works with.
type opRequest struct {
	// requested: this reconcile asked for the operation (an automated
	// sync), which is not written yet.
	requested bool
	app       *v1alpha1.Application
	proj      *v1alpha1.AppProject
	dest      *cluster.Cluster
	target    *destination.Target
	settings  *Settings
}

// handleOperation decides on the app's requested operation (to start or
// resume it), or requests an automated sync when the policy calls for one,
// in req.app; it reports whether a sync is to run. A sync that a sync
// window or a dependency holds back is recorded as a wait condition; the
// returned duration is when a closed sync window opens (0: no wait).
func (sr *starter) handleOperation(ctx context.Context, req opRequest) (time.Duration, bool) {
	app := req.app
	if st := app.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationTerminating {
		sr.terminate(ctx, app)
		return 0, false
	}
	if sr.runs.Active(sr.key(app)) {
		sr.supersedeIfNewRevision(ctx, app)
		return 0, false
	}
	// An automated sync this reconcile requests was checked for waits here.
	checked := false
	if app.Operation == nil {
		op, wait := sr.autoSyncOperation(app)
		if op == nil {
			if wait > 0 {
				sr.requeueAfter(app, wait)
			}
			sr.setWait(ctx, app, "", "")
			return 0, false
		}
		if wait, msg := sr.held(ctx, req, false); msg.typ != "" {
			sr.setWait(ctx, app, msg.typ, msg.text)
			return wait, false
		}
		// The refreshed status and the operation go in one write.
		app.Operation = op
		clearWaits(&app.Status)
		logctx.From(ctx).Info("automated sync requested", "revision", op.Sync.Revision)
		checked = true
	}
	resuming := app.Status.OperationState != nil && app.Status.OperationState.Phase == v1alpha1.OperationRunning &&
		operation.EqualOperation(app.Status.OperationState.Operation, *app.Operation)
	if !resuming && !checked {
		if wait, msg := sr.held(ctx, req, !app.Operation.InitiatedBy.Automated); msg.typ != "" {
			sr.setWait(ctx, app, msg.typ, msg.text)
			return wait, false
		}
		sr.setWait(ctx, app, "", "")
	}
	return 0, true
}

// terminate ends the operation a user terminated (Argo CD's
// terminate-op: status.operationState.phase Terminating): the runner of a
// running sync ends it at once; with none running here (a sync that a
// window or a dependency held, or one a stopped controller ran), the
// operation ends now, Failed.
func (sr *starter) terminate(ctx context.Context, app *v1alpha1.Application) {
	if sr.runs.Active(sr.key(app)) {
		if sr.runs.Terminate(sr.key(app)) {
			logctx.From(ctx).Info("operation terminated by a user")
		}
		return
	}
	now := metav1.NewTime(sr.now())
	st := app.Status.OperationState
	st.Phase, st.Message, st.FinishedAt = v1alpha1.OperationFailed, "Operation terminated", &now
	app.Operation = nil
	clearWaits(&app.Status)
	logctx.From(ctx).Info("operation terminated by a user before it ran here")
}

// startRunner runs the app's operation in a runner of its own. request,
// when not nil, is the reconcile's pending patch that asked for the
// operation (an automated sync), not written yet: the sync's first write
// carries it (deferRequest), or it is written now when no runner starts.
func (sr *starter) startRunner(ctx context.Context, req opRequest, request *appstatus.Patch) error {
	app := req.app
	if app.Operation == nil {
		// Another writer (a replica that owned the app a moment ago, a user)
		// removed the operation since it was asked for: nothing to run.
		return nil
	}
	runCtx, cancel := context.WithCancel(logctx.With(sr.life.context(), logctx.From(ctx)))
	if !sr.runs.Start(sr.key(app), cancel, sr.now()) {
		cancel()
		if request != nil {
			return request.Flush(ctx)
		}
		return nil
	}
	if request != nil {
		// The operation was asked for from this copy, which includes the
		// controller's last write (ReadCurrent): nothing ran it since. The
		// request's write owns app; the runner reads a copy of its own.
		req.app = app.DeepCopy()
		sr.runs.Wrote(sr.key(app), app.DeepCopy())
		sr.deferRequest(runCtx, sr.key(app), request)
		go sr.runner.Run(runCtx, req.operation(), sr.host(req))
		return nil
	}
	// A runner may have finished this very operation since app was read:
	// start only what the API server still asks for. A copy at or after
	// the controller's own last write to the app (the operation it just
	// requested, say) already includes any runner's end.
	if !sr.status.IncludesLast(client.ObjectKeyFromObject(app), app.ResourceVersion) {
		fresh := &v1alpha1.Application{}
		if err := sr.apiReader.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil || fresh.Operation == nil ||
			!operation.EqualOperation(*fresh.Operation, *app.Operation) {
			sr.runs.Done(sr.key(app))
			cancel()
			return client.IgnoreNotFound(err)
		}
		req.app = fresh
	} else {
		// The runner reads a copy of its own: the reconcile goes on with app.
		req.app = app.DeepCopy()
	}
	sr.runs.Wrote(sr.key(app), req.app.DeepCopy())
	go sr.runner.Run(runCtx, req.operation(), sr.host(req))
	return nil
}

// waitMessage is a wait condition to record.
type waitMessage struct{ typ, text string }

// held says why a sync may not start now (a sync window, then the app's
// dependencies), with how long until the window opens; zero when it may.
func (sr *starter) held(ctx context.Context, req opRequest, manual bool) (time.Duration, waitMessage) {
	if wait, msg := sr.windowWait(req, manual); msg != "" {
		return wait, waitMessage{typ: ConditionSyncWindowWait, text: msg}
	}
	if msg := sr.dependencyWait(ctx, req.app); msg != "" {
		return 0, waitMessage{typ: v1alpha1.ApplicationConditionDependencyWait, text: msg}
	}
	return 0, waitMessage{}
}

// waitConditions are the conditions that say why a sync has not started.
var waitConditions = []string{ConditionSyncWindowWait, v1alpha1.ApplicationConditionDependencyWait}

// setWait records the wait condition typ with message text, dropping the
// other wait conditions; typ "" drops them all.
func (sr *starter) setWait(ctx context.Context, app *v1alpha1.Application, typ, text string) {
	for _, c := range waitConditions {
		if c != typ {
			application.ClearCondition(&app.Status, c)
		}
	}
	if typ != "" && (!hasCondition(app, typ) || conditionMessage(app, typ) != text) {
		application.SetCondition(&app.Status, typ, text, sr.now())
		logctx.From(ctx).Info("sync waits", "condition", typ, "message", text)
	}
}

func clearWaits(st *v1alpha1.ApplicationStatus) {
	for _, c := range waitConditions {
		application.ClearCondition(st, c)
	}
}

func (sr *starter) dependencyWait(ctx context.Context, app *v1alpha1.Application) string {
	if len(application.DependsOn(app)) == 0 {
		return ""
	}
	list := &v1alpha1.ApplicationList{}
	if err := sr.client.List(ctx, list, client.InNamespace(app.Namespace)); err != nil {
		return "waiting for dependencies: " + err.Error()
	}
	apps := map[string]*v1alpha1.Application{}
	for i := range list.Items {
		apps[list.Items[i].Name] = &list.Items[i]
	}
	return dependencyWait(app, apps)
}

func (sr *starter) requeueAfter(app *v1alpha1.Application, d time.Duration) {
	namespace, name := app.Namespace, app.Name // app is written meanwhile
	time.AfterFunc(d, func() { sr.enqueue(namespace, name) })
}

// operation is the request as the operation runner takes it.
func (req opRequest) operation() operation.Request {
	return operation.Request{
		App: req.app, Project: req.proj, Target: req.target, Settings: &req.settings.Settings,
		WaveDelay: req.settings.WaveDelay, StallTimeout: req.settings.StallTimeout,
	}
}

// opHost is the controller as one running operation sees it.
type opHost struct {
	r   *Reconciler
	req opRequest
}

// Compare compares app in the operation's final write.
func (h opHost) Compare(ctx context.Context, app *v1alpha1.Application, applied []*unstructured.Unstructured) {
	if err := h.r.compareInto(ctx, h.req.target, app, h.req.proj, h.req.settings, compare.CompareOptions{Applied: applied}); err == nil {
		h.r.compared.set(h.r.key(app), app.Status.ReconciledAt.Time)
	}
}

// Ended reconciles the app again once its runner returned; without the
// comparison in its final write, as a refresh.
func (h opHost) Ended(app *v1alpha1.Application, compared bool) {
	if !compared {
		h.r.refreshes.mark(h.r.key(app), normalRefresh)
	}
	h.r.enqueue(app.Namespace, app.Name)
}
