package appset

import (
	"sync"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// resultCache keeps each set's last generated Applications, so that the
// many reconciles its apps' health and sync changes cause during a rollout
// do not read Git each time. An entry is used while the set's generation
// and the cluster Secrets are unchanged and its requeue period (the git
// polling interval) has not passed; the refresh annotation bypasses it.
type resultCache struct {
	mu       sync.Mutex
	clusters uint64 // bumped on every cluster Secret event
	entries  map[string]resultEntry
}

type resultEntry struct {
	uid        string
	generation int64
	clusters   uint64
	at         time.Time
	result     *Generated
}

func (c *resultCache) bumpClusters() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clusters++
}

// get returns the set's cached result, if still valid at now.
func (c *resultCache) get(set *v1alpha1.ApplicationSet, now time.Time) (*Generated, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[set.Name]
	if !ok || e.uid != string(set.UID) || e.generation != set.Generation || e.clusters != c.clusters {
		return nil, false
	}
	if d := e.result.RequeueAfter; d > 0 && !now.Before(e.at.Add(d)) {
		return nil, false
	}
	return e.result, true
}

// epoch returns the cluster Secrets' counter, read before generating so
// that a Secret event during the run invalidates the result.
func (c *resultCache) epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clusters
}

func (c *resultCache) put(set *v1alpha1.ApplicationSet, clusters uint64, at time.Time, result *Generated) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[set.Name] = resultEntry{uid: string(set.UID), generation: set.Generation, clusters: clusters, at: at, result: result}
}

func (c *resultCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, name)
}

// remaining is how long the set's cached result stays valid (0: no expiry
// or no entry).
func (c *resultCache) remaining(name string, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok || e.result.RequeueAfter == 0 {
		return 0
	}
	return max(e.at.Add(e.result.RequeueAfter).Sub(now), time.Second)
}

// failureCounter backs off the retries of a set whose generation fails:
// 5 s, doubling, capped at errorRequeue.
type failureCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// errorRequeue caps the retry delay of a failing set (Argo CD's 3 min).
const errorRequeue = 3 * time.Minute

func (f *failureCounter) next(name string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.counts[name]
	f.counts[name] = n + 1
	d := 5 * time.Second << min(n, 10)
	return min(d, errorRequeue)
}

func (f *failureCounter) reset(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.counts, name)
}
