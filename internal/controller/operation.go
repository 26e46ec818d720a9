package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	stdsync "sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/appstatus"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// setBase records the controller's lifetime context: sync runners stop
// with the controller (their state is saved, and the next one resumes).
func (r *Reconciler) setBase(ctx context.Context) {
	r.baseMu.Lock()
	defer r.baseMu.Unlock()
	r.baseCtx = ctx
}

func (r *Reconciler) base() context.Context {
	r.baseMu.Lock()
	defer r.baseMu.Unlock()
	if r.baseCtx == nil {
		return context.Background()
	}
	return r.baseCtx
}

// runners tracks the sync operation running for each app.
type runners struct {
	mu      stdsync.Mutex
	running map[string]runner
	// slots bounds how many operations run at once (Argo CD's operation
	// processors); nil: no bound.
	slots chan struct{}
}

// newRunners tracks runners, at most processors of them syncing at once
// (0: no bound).
func newRunners(processors int) *runners {
	rs := &runners{running: map[string]runner{}}
	if processors > 0 {
		rs.slots = make(chan struct{}, processors)
	}
	return rs
}

// acquire waits for a free operation slot; false when ctx ends first.
// Each acquire that returns true is paired with a release.
func (rs *runners) acquire(ctx context.Context) bool {
	if rs.slots == nil {
		return true
	}
	select {
	case rs.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release frees the slot an acquire took.
func (rs *runners) release() {
	if rs.slots != nil {
		<-rs.slots
	}
}

// runner is one running sync operation.
type runner struct {
	cancel  context.CancelFunc
	started time.Time
	// stop is closed to ask the sync to stop at its next safe point.
	stop       chan struct{}
	superseded bool
	// revision is the revision the current attempt syncs, once resolved.
	revision string
	// ended is closed when the runner has returned.
	ended chan struct{}
	// last is the app as the runner last wrote it, or as it was read
	// when the runner started.
	last *v1alpha1.Application
	// request is the automated sync's request its first write carries;
	// nil when it was written before the sync started.
	request *requestWrite
}

// setRequest records the request app name's first write carries.
func (rs *runners) setRequest(name string, q *requestWrite) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if run, ok := rs.running[name]; ok {
		run.request = q
		rs.running[name] = run
	}
}

// request is the request app name's first write carries; nil when none.
func (rs *runners) request(name string) *requestWrite {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].request
}

// lastWritten is app name as its runner last wrote it; nil when none
// runs. The caller must not modify it.
func (rs *runners) lastWritten(name string) *v1alpha1.Application {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].last
}

// wrote records app as its runner's last write.
func (rs *runners) wrote(name string, app *v1alpha1.Application) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if run, ok := rs.running[name]; ok && app != nil {
		run.last = app
		rs.running[name] = run
	}
}

func (rs *runners) active(name string) bool {
	_, ok := rs.since(name)
	return ok
}

// since returns when the operation running for app name started.
func (rs *runners) since(name string) (time.Time, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	run, ok := rs.running[name]
	return run.started, ok
}

func (rs *runners) count() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.running)
}

func (rs *runners) start(name string, cancel context.CancelFunc, now time.Time) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.running[name]; ok {
		return false
	}
	rs.running[name] = runner{cancel: cancel, started: now, stop: make(chan struct{}), ended: make(chan struct{})}
	return true
}

// stopChan is the channel that asks app name's sync to stop; nil when
// none runs.
func (rs *runners) stopChan(name string) <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].stop
}

// syncing records the revision app name's current attempt syncs.
func (rs *runners) syncing(name, revision string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if run, ok := rs.running[name]; ok {
		run.revision = revision
		rs.running[name] = run
	}
}

// revision returns the revision app name's current attempt syncs; empty
// when none runs or it is not resolved yet.
func (rs *runners) revision(name string) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].revision
}

// supersede asks app name's sync to stop at its next safe point; it
// reports whether this call asked (false when none runs or it was asked).
func (rs *runners) supersede(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	run, ok := rs.running[name]
	if !ok || run.superseded {
		return false
	}
	close(run.stop)
	run.superseded = true
	rs.running[name] = run
	return true
}

// done records that app name's runner returned; a request it did not
// write is dropped (a write under way ends first) before anyone waiting
// for the runner's end is told.
func (rs *runners) done(name string) {
	rs.mu.Lock()
	run, ok := rs.running[name]
	delete(rs.running, name)
	rs.mu.Unlock()
	if run.request != nil {
		run.request.drop()
	}
	if ok {
		close(run.ended)
	}
}

// stop cancels app name's operation; the channel it returns (nil when
// none runs) is closed once its runner has returned.
func (rs *runners) stop(name string) <-chan struct{} {
	rs.mu.Lock()
	run, ok := rs.running[name]
	rs.mu.Unlock()
	if !ok {
		return nil
	}
	run.cancel()
	return run.ended
}

// stopWait stops app name's operation, and returns once its runner has.
func (rs *runners) stopWait(name string) {
	if ended := rs.stop(name); ended != nil {
		<-ended
	}
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
func (r *Reconciler) handleOperation(ctx context.Context, req opRequest) (time.Duration, bool) {
	app := req.app
	if r.runners.active(app.Name) {
		r.supersedeIfNewRevision(ctx, app)
		return 0, false
	}
	// An automated sync this reconcile requests was checked for waits here.
	checked := false
	if app.Operation == nil {
		op, wait := r.autoSyncOperation(app)
		if op == nil {
			if wait > 0 {
				r.requeueAfter(app, wait)
			}
			r.setWait(ctx, app, "", "")
			return 0, false
		}
		if wait, msg := r.held(ctx, req, false); msg.typ != "" {
			r.setWait(ctx, app, msg.typ, msg.text)
			return wait, false
		}
		// The refreshed status and the operation go in one write.
		app.Operation = op
		clearWaits(&app.Status)
		logctx.From(ctx).Info("automated sync requested", "revision", op.Sync.Revision)
		checked = true
	}
	resuming := app.Status.OperationState != nil && app.Status.OperationState.Phase == v1alpha1.OperationRunning &&
		reflect.DeepEqual(app.Status.OperationState.Operation, *app.Operation)
	if !resuming && !checked {
		if wait, msg := r.held(ctx, req, !app.Operation.InitiatedBy.Automated); msg.typ != "" {
			r.setWait(ctx, app, msg.typ, msg.text)
			return wait, false
		}
		r.setWait(ctx, app, "", "")
	}
	return 0, true
}

// startRunner runs the app's operation in a runner of its own. request,
// when not nil, is the reconcile's pending patch that asked for the
// operation (an automated sync), not written yet: the sync's first write
// carries it (deferRequest), or it is written now when no runner starts.
func (r *Reconciler) startRunner(ctx context.Context, req opRequest, request *appstatus.Patch) error {
	app := req.app
	if app.Operation == nil {
		// Another writer (a replica that owned the app a moment ago, a user)
		// removed the operation since it was asked for: nothing to run.
		return nil
	}
	runCtx, cancel := context.WithCancel(logctx.With(r.base(), logctx.From(ctx)))
	if !r.runners.start(app.Name, cancel, r.now()) {
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
		r.runners.wrote(app.Name, app.DeepCopy())
		r.deferRequest(runCtx, app.Name, request)
		go r.runOperation(runCtx, req)
		return nil
	}
	// A runner may have finished this very operation since app was read:
	// start only what the API server still asks for. A copy at or after
	// the controller's own last write to the app (the operation it just
	// requested, say) already includes any runner's end.
	if !r.status.IncludesLast(app.Name, app.ResourceVersion) {
		fresh := &v1alpha1.Application{}
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil || fresh.Operation == nil ||
			!reflect.DeepEqual(*fresh.Operation, *app.Operation) {
			r.runners.done(app.Name)
			cancel()
			return client.IgnoreNotFound(err)
		}
		req.app = fresh
	} else {
		// The runner reads a copy of its own: the reconcile goes on with app.
		req.app = app.DeepCopy()
	}
	r.runners.wrote(app.Name, req.app.DeepCopy())
	go r.runOperation(runCtx, req)
	return nil
}

// waitMessage is a wait condition to record.
type waitMessage struct{ typ, text string }

// held says why a sync may not start now (a sync window, then the app's
// dependencies), with how long until the window opens; zero when it may.
func (r *Reconciler) held(ctx context.Context, req opRequest, manual bool) (time.Duration, waitMessage) {
	if wait, msg := r.windowWait(req, manual); msg != "" {
		return wait, waitMessage{typ: ConditionSyncWindowWait, text: msg}
	}
	if msg := r.dependencyWait(ctx, req.app); msg != "" {
		return 0, waitMessage{typ: v1alpha1.ApplicationConditionDependencyWait, text: msg}
	}
	return 0, waitMessage{}
}

// waitConditions are the conditions that say why a sync has not started.
var waitConditions = []string{ConditionSyncWindowWait, v1alpha1.ApplicationConditionDependencyWait}

// setWait records the wait condition typ with message text, dropping the
// other wait conditions; typ "" drops them all.
func (r *Reconciler) setWait(ctx context.Context, app *v1alpha1.Application, typ, text string) {
	for _, c := range waitConditions {
		if c != typ {
			application.ClearCondition(&app.Status, c)
		}
	}
	if typ != "" && (!hasCondition(app, typ) || conditionMessage(app, typ) != text) {
		application.SetCondition(&app.Status, typ, text, r.now())
		logctx.From(ctx).Info("sync waits", "condition", typ, "message", text)
	}
}

func clearWaits(st *v1alpha1.ApplicationStatus) {
	for _, c := range waitConditions {
		application.ClearCondition(st, c)
	}
}

func (r *Reconciler) dependencyWait(ctx context.Context, app *v1alpha1.Application) string {
	if len(application.DependsOn(app)) == 0 {
		return ""
	}
	list := &v1alpha1.ApplicationList{}
	if err := r.client.List(ctx, list, client.InNamespace(app.Namespace)); err != nil {
		return "waiting for dependencies: " + err.Error()
	}
	apps := map[string]*v1alpha1.Application{}
	for i := range list.Items {
		apps[list.Items[i].Name] = &list.Items[i]
	}
	return dependencyWait(app, apps)
}

func (r *Reconciler) requeueAfter(app *v1alpha1.Application, d time.Duration) {
	namespace, name := app.Namespace, app.Name // app is written meanwhile
	time.AfterFunc(d, func() { r.enqueue(namespace, name) })
}

// saveState writes the operation state; fields other than operationState
// (and operation when clear is set) are left to the reconciler.
//
// The runner keeps the app as it last wrote it: while the cache has not
// caught up with that write (a sync saving its steps in quick
// succession), the next write starts from it instead of reading the API
// server.
func (r *Reconciler) saveState(ctx context.Context, name string, update func(app *v1alpha1.Application)) error {
	if q := r.runners.request(name); q != nil {
		combined, err := r.writeRequest(ctx, name, q, update)
		if err != nil {
			return fmt.Errorf("write operation state of %s: %w", name, err)
		}
		if combined {
			return nil
		}
	}
	key := client.ObjectKey{Namespace: r.opts.Namespace, Name: name}
	written, err := r.status.UpdateFrom(ctx, key, r.runners.lastWritten(name), update)
	if err != nil {
		return fmt.Errorf("write operation state of %s: %w", name, err)
	}
	r.runners.wrote(name, written)
	return nil
}

// encodeState is the sync state as status.operationState.wavecdState
// holds it: compressed when large (a root of thousands of children).
func encodeState(st *wsync.State) *apiextensionsv1.JSON {
	raw, err := application.EncodeState(st)
	if err != nil {
		return nil
	}
	return raw
}

func decodeState(os *v1alpha1.OperationState) *wsync.State {
	if os == nil || os.WavecdState == nil {
		return &wsync.State{}
	}
	b, err := application.StateJSON(os.WavecdState)
	st := &wsync.State{}
	if err != nil || json.Unmarshal(b, st) != nil {
		return &wsync.State{}
	}
	return st
}

// syncResult converts the executor's result to Argo CD's shape.
func syncResult(st *wsync.State, revision string, app *v1alpha1.Application) *v1alpha1.SyncOperationResult {
	res := st.Result()
	out := &v1alpha1.SyncOperationResult{Revision: revision}
	if app.Spec.Source != nil {
		out.Source = *app.Spec.Source
	}
	for _, rr := range res.Resources {
		out.Resources = append(out.Resources, &v1alpha1.ResourceResult{
			Group: rr.Group, Version: rr.Version, Kind: rr.Kind, Namespace: rr.Namespace, Name: rr.Name,
			Status: rr.Status, Message: rr.Message, HookType: rr.HookType,
			HookPhase: string(rr.HookPhase), SyncPhase: string(rr.SyncPhase),
			StartedAt: microTime(rr.StartedAt), FinishedAt: microTime(rr.FinishedAt),
		})
	}
	return out
}

// microTime is t for the API; nil when zero.
func microTime(t time.Time) *metav1.MicroTime {
	if t.IsZero() {
		return nil
	}
	m := metav1.NewMicroTime(t)
	return &m
}

func metaNow(t time.Time) metav1.Time { return metav1.NewTime(t) }
