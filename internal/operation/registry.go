package operation

import (
	"context"
	stdsync "sync"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Registry tracks the sync operation running for each app.
type Registry struct {
	mu      stdsync.Mutex
	running map[string]runner
	// slots bounds how many operations run at once (Argo CD's operation
	// processors); nil: no bound.
	slots chan struct{}
}

// PendingWrite is a write an operation's first save carries: an automated
// sync's request that the controller has not written yet.
type PendingWrite interface {
	// Write writes it, with change in the same write when it can
	// (combined is then true); a pending write already written or
	// dropped writes nothing.
	Write(ctx context.Context, change func(app *v1alpha1.Application)) (combined bool, err error)
	// Drop forgets it: the operation ended without a write.
	Drop()
}

// NewRegistry tracks runners, at most processors of them syncing at once
// (0: no bound).
func NewRegistry(processors int) *Registry {
	rs := &Registry{running: map[string]runner{}}
	if processors > 0 {
		rs.slots = make(chan struct{}, processors)
	}
	return rs
}

// acquire waits for a free operation slot; false when ctx ends first.
// Each acquire that returns true is paired with a release.
func (rs *Registry) acquire(ctx context.Context) bool {
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
func (rs *Registry) release() {
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
	// terminate is closed to end the sync at once (a user's terminate).
	terminate  chan struct{}
	terminated bool
	// revision is the revision the current attempt syncs, once resolved.
	revision string
	// ended is closed when the runner has returned.
	ended chan struct{}
	// last is the app as the runner last wrote it, or as it was read
	// when the runner started.
	last *v1alpha1.Application
	// pending is the write its first save carries; nil when none.
	pending PendingWrite
}

// SetPending records the write app name's first save carries.
func (rs *Registry) SetPending(name string, w PendingWrite) {
	rs.update(name, func(run *runner) { run.pending = w })
}

// update changes app name's runner with change; nothing when none runs.
func (rs *Registry) update(name string, change func(*runner)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if run, ok := rs.running[name]; ok {
		change(&run)
		rs.running[name] = run
	}
}

// pending is the write app name's first save carries; nil when none.
func (rs *Registry) pending(name string) PendingWrite {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].pending
}

// lastWritten is app name as its runner last wrote it; nil when none
// runs. The caller must not modify it.
func (rs *Registry) lastWritten(name string) *v1alpha1.Application {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].last
}

// Wrote records app as its runner's last write.
func (rs *Registry) Wrote(name string, app *v1alpha1.Application) {
	if app != nil {
		rs.update(name, func(run *runner) { run.last = app })
	}
}

// Active reports whether an operation runs for app name.
func (rs *Registry) Active(name string) bool {
	_, ok := rs.Since(name)
	return ok
}

// Since returns when the operation running for app name started.
func (rs *Registry) Since(name string) (time.Time, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	run, ok := rs.running[name]
	return run.started, ok
}

// Count is how many operations run.
func (rs *Registry) Count() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.running)
}

// Start records a runner for app name, which cancel stops; false when
// one runs already.
func (rs *Registry) Start(name string, cancel context.CancelFunc, now time.Time) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.running[name]; ok {
		return false
	}
	rs.running[name] = runner{cancel: cancel, started: now, stop: make(chan struct{}), terminate: make(chan struct{}), ended: make(chan struct{})}
	return true
}

// stopChan is the channel that asks app name's sync to stop; nil when
// none runs.
func (rs *Registry) stopChan(name string) <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].stop
}

// terminateChan is the channel that ends app name's sync at once; nil
// when none runs.
func (rs *Registry) terminateChan(name string) <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].terminate
}

// Terminate ends app name's sync at once, as a user's terminate-op asks;
// it reports whether this call asked (false when none runs or it was
// asked).
func (rs *Registry) Terminate(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	run, ok := rs.running[name]
	if !ok || run.terminated {
		return false
	}
	close(run.terminate)
	run.terminated = true
	rs.running[name] = run
	return true
}

// syncing records the revision app name's current attempt syncs.
func (rs *Registry) syncing(name, revision string) {
	rs.update(name, func(run *runner) { run.revision = revision })
}

// Revision returns the revision app name's current attempt syncs; empty
// when none runs or it is not resolved yet.
func (rs *Registry) Revision(name string) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[name].revision
}

// Supersede asks app name's sync to stop at its next safe point; it
// reports whether this call asked (false when none runs or it was asked).
func (rs *Registry) Supersede(name string) bool {
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

// Done records that app name's runner returned (or never ran); a pending
// write it did not make is dropped (a write under way ends first) before
// anyone waiting for the runner's end is told.
func (rs *Registry) Done(name string) {
	rs.mu.Lock()
	run, ok := rs.running[name]
	delete(rs.running, name)
	rs.mu.Unlock()
	if run.pending != nil {
		run.pending.Drop()
	}
	if ok {
		close(run.ended)
	}
}

// Stop cancels app name's operation; the channel it returns (nil when
// none runs) is closed once its runner has returned.
func (rs *Registry) Stop(name string) <-chan struct{} {
	rs.mu.Lock()
	run, ok := rs.running[name]
	rs.mu.Unlock()
	if !ok {
		return nil
	}
	run.cancel()
	return run.ended
}

// StopWait stops app name's operation, and returns once its runner has.
func (rs *Registry) StopWait(name string) {
	if ended := rs.Stop(name); ended != nil {
		<-ended
	}
}
