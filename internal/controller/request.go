package controller

import (
	"context"
	stdsync "sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appstatus"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/operation"
)

// An automated sync's request, with the comparison that asked for it, is
// written by the sync's first write instead of before the sync starts:
// a sync that only applies then costs one status write, its result,
// instead of two. Nothing a resumed sync needs is lost: until its first
// write a sync has done only what running it again redoes safely (applies;
// a hook's creation is saved first, and that save carries the request),
// and a sync stopped before it (a crash, a replica losing the app) leaves
// an app whose next comparison asks for the same sync again. A sync that
// has not written within requestWriteDelay of its request (waiting for an
// operation slot, or waiting on its objects) writes the request then, as
// it would have been written before the sync, so the app shows that it
// is out of sync and syncing. Events are recorded as for two writes (the
// request, then the result).

// requestWriteDelay is how long an automated sync's request may wait for
// the sync's first write: the progress writer's interval, so a sync that
// ends sooner writes only its result.
const requestWriteDelay = operation.ProgressInterval

// requestWrite is an automated sync's request not yet written: the
// reconcile's pending patch of the app, which holds the operation.
type requestWrite struct {
	sr   *starter
	name string
	// mu is held while the patch is written, so that no other write of
	// the sync goes before it.
	mu    stdsync.Mutex
	patch *appstatus.Patch // nil once written or dropped
	timer *time.Timer
}

// deferRequest leaves the pending patch p, which requests an automated
// sync of app name, to the sync's first write, or to a write of its own
// after requestWriteDelay. The runner must be started.
func (sr *starter) deferRequest(ctx context.Context, name string, p *appstatus.Patch) {
	q := &requestWrite{sr: sr, name: name, patch: p}
	// Held until the timer is set: a write the timer starts waits for it.
	q.mu.Lock()
	defer q.mu.Unlock()
	q.timer = time.AfterFunc(requestWriteDelay, func() {
		if _, err := q.Write(ctx, nil); err != nil {
			logctx.From(ctx).Warn("write automated sync request", "err", err)
		}
	})
	sr.runs.SetPending(name, q)
}

// Write writes the request q unless it was written or dropped. With
// change, the sync's own first write, the request and change go in one
// write when the app has not changed since the request was made
// (combined is then true); otherwise the request is written alone first,
// and the caller writes change as usual.
func (q *requestWrite) Write(ctx context.Context, change func(app *v1alpha1.Application)) (combined bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.patch
	if p == nil {
		return false, nil
	}
	q.patch = nil
	q.timer.Stop()
	if change != nil && q.sr.unchangedSince(ctx, p.Base()) {
		p.Stage()
		change(p.App())
		combined = true
	}
	if err := p.Flush(ctx); err != nil {
		return false, err
	}
	q.sr.runs.Wrote(q.name, p.App().DeepCopy())
	return combined, nil
}

// unchangedSince reports whether the cached app is still at base's
// version: no one wrote it since. Only the version is read: the cache's
// own copy serves, uncopied.
func (sr *starter) unchangedSince(ctx context.Context, base *v1alpha1.Application) bool {
	cur := &v1alpha1.Application{}
	if err := sr.client.Get(ctx, client.ObjectKeyFromObject(base), cur, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	return cur.ResourceVersion == base.ResourceVersion
}

// Drop forgets a request not yet written: its sync ended without a write
// (stopped), and the app's next comparison asks again.
func (q *requestWrite) Drop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.patch = nil
	if q.timer != nil {
		q.timer.Stop()
	}
}
