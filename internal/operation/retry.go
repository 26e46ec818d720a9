package operation

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// retry decides whether a failed sync runs again, and waits the backoff.
// An attempt that failed while the API server was unreachable does not
// count: the next one starts as soon as the server answers, instead of
// spending the retries and growing the backoff during the outage (with
// no status written, a retry then looked stuck long after the server was
// back).
func (rn *Runner) retry(ctx context.Context, app *v1alpha1.Application, opState *v1alpha1.OperationState, st *wsync.State) bool {
	if rn.waitAPIServer(ctx, app) {
		return ctx.Err() == nil
	}
	limit, backoff := retryPolicy(opState.Operation.Retry, app)
	if limit >= 0 && opState.RetryCount >= limit {
		return false
	}
	if end, _, err := deadline(app, opState); err != nil || !end.IsZero() && !rn.Now().Before(end) {
		return false // the operation timed out: no retry
	}
	wait := backoff.delay(opState.RetryCount)
	opState.RetryCount++
	if opState.Operation.Retry.Refresh && opState.Operation.Sync != nil {
		// As Argo CD's retry.refresh: the retry syncs the latest revision.
		opState.Operation.Sync.Revision, opState.Operation.Sync.Revisions = "", nil
	}
	opState.Phase = v1alpha1.OperationRunning
	opState.Message = fmt.Sprintf("Retrying attempt #%d at %s: %s", opState.RetryCount, rn.Now().Add(wait).Format("15:04:05"), st.Message)
	opState.WavecdState = nil
	snapshot := opState.DeepCopy()
	if err := rn.save(ctx, app, func(a *v1alpha1.Application) { a.Status.OperationState = snapshot }); err != nil {
		logctx.From(ctx).Warn("save retry", "err", err)
	}
	select {
	case <-ctx.Done():
		return false
	case <-rn.Registry.stopChan(rn.key(app)):
		return false
	case <-rn.Registry.terminateChan(rn.key(app)):
		now := rn.Now().UTC()
		st.Phase, st.Message, st.FinishedAt = v1alpha1.OperationFailed, "Operation terminated", &now
		return false
	case <-time.After(wait):
		return true
	}
}

// backoff is a retry backoff.
type backoff struct {
	base, max time.Duration
	factor    int64
}

func (b backoff) delay(attempt int64) time.Duration {
	d := b.base
	for i := int64(0); i < attempt && d < b.max; i++ {
		d *= time.Duration(b.factor)
	}
	return min(d, b.max)
}

// retryPolicy returns the retry limit (-1 unlimited) and backoff; automated
// syncs retry 5 times when no limit is set, as Argo CD does.
func retryPolicy(rs v1alpha1.RetryStrategy, app *v1alpha1.Application) (int64, backoff) {
	b := backoff{base: 5 * time.Second, max: 3 * time.Minute, factor: 2}
	if rs.Backoff != nil {
		if d, err := v1alpha1.ParseDuration(rs.Backoff.Duration); err == nil && rs.Backoff.Duration != "" {
			b.base = d
		}
		if d, err := v1alpha1.ParseDuration(rs.Backoff.MaxDuration); err == nil && rs.Backoff.MaxDuration != "" {
			b.max = d
		}
		if rs.Backoff.Factor != nil && *rs.Backoff.Factor > 0 {
			b.factor = *rs.Backoff.Factor
		}
	}
	limit := rs.Limit
	if limit == 0 && automated(app) && app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Retry == nil {
		limit = 5
	}
	return limit, b
}

// EqualOperation reports whether a and b are the same operation: a
// running operation state of the app's operation is resumed.
func EqualOperation(a, b v1alpha1.Operation) bool { return reflect.DeepEqual(a, b) }

// deadline is when the operation times out (wavecd.io/sync-timeout after
// it started, retries included), with the reason the sync gives; zero
// without a timeout.
func deadline(app *v1alpha1.Application, opState *v1alpha1.OperationState) (time.Time, string, error) {
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
func (rn *Runner) waitAPIServer(ctx context.Context, app *v1alpha1.Application) bool {
	reachable := func() bool {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := rn.APIReader.Get(rctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{})
		return err == nil || apierrors.IsNotFound(err)
	}
	if reachable() {
		return false
	}
	logctx.From(ctx).Warn("the sync attempt failed with the API server unreachable; it does not count, and the next starts when the server answers")
	for ctx.Err() == nil && !reachable() {
		select {
		case <-ctx.Done():
		case <-time.After(apiPollInterval):
		}
	}
	return true
}
