package controller

import (
	"hash/fnv"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// refreshTick is the grain of periodic refreshes: they fall due on whole
// seconds, so the apps due within one second are refreshed together, in
// one wake-up of the work queue and its workers instead of one each.
const refreshTick = time.Second

// nextRefresh is when the app's periodic refresh falls due: the
// reconciliation timeout after its last comparison, plus its share of
// timeout.reconciliation.jitter, so apps do not refresh in lockstep; on
// a whole second (refreshTick). A failed comparison is retried sooner
// (comparisonRetry).
func (r *Reconciler) nextRefresh(app *v1alpha1.Application, s *Settings) time.Duration {
	if s.ReconcileTimeout <= 0 {
		return 0
	}
	now := r.now()
	jitter := refreshJitter(app, s.ReconcileJitter)
	last, ok := r.lastCompared(app)
	if !ok {
		return onRefreshTick(now, s.ReconcileTimeout+jitter)
	}
	if retry, failed := r.comparisonRetry(app, s); failed {
		return max(retry-now.Sub(last), time.Second)
	}
	left := max(s.ReconcileTimeout-now.Sub(last), time.Second)
	return onRefreshTick(now, left+jitter)
}

// refreshJitter is the app's share of jitter: the same for every
// reconcile of the app, and spread evenly over [0, jitter) across apps.
// A new random draw at each reconcile would not spread them: the work
// queue keeps an app's earliest due time, so an app reconciled five
// times in a bootstrap would refresh at the least of five draws, most
// apps in the first sixth of the jitter.
func refreshJitter(app *v1alpha1.Application, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(app.Namespace))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(app.Name))
	return time.Duration(h.Sum64() % uint64(jitter))
}

// onRefreshTick is d, from now, lengthened to end on a refreshTick.
func onRefreshTick(now time.Time, d time.Duration) time.Duration {
	due := now.Add(d)
	if t := due.Truncate(refreshTick); t.Before(due) {
		due = t.Add(refreshTick)
	}
	return due.Sub(now)
}

// lastCompared is when app was last compared: by this controller, or as
// its status says.
func (r *Reconciler) lastCompared(app *v1alpha1.Application) (time.Time, bool) {
	t, ok := r.compared.get(r.key(app))
	if st := app.Status.ReconciledAt; st != nil && st.After(t) {
		return st.Time, true
	}
	return t, ok
}
