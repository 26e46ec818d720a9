package workloads

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// syncFunc handles one key and may ask to be called again after a while.
type syncFunc func(ctx context.Context, key string) (after time.Duration, err error)

// newQueue is a rate-limited work queue of object keys.
func newQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// runWorkers feeds the queue's keys to sync from n goroutines until ctx
// ends: failures are retried with back-off, requested delays honoured.
func runWorkers(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], n int, log *slog.Logger, sync syncFunc) {
	defer q.ShutDown()
	for range n {
		go func() {
			for processNext(ctx, q, log, sync) {
			}
		}()
	}
	<-ctx.Done()
}

func processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], log *slog.Logger, sync syncFunc) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	after, err := sync(ctx, key)
	switch {
	case err != nil:
		log.Warn("sync failed; retrying", "key", key, "err", err)
		q.AddRateLimited(key)
	case after > 0:
		q.Forget(key)
		q.AddAfter(key, after)
	default:
		q.Forget(key)
	}
	return true
}
