package shard

import (
	"context"
	"hash/fnv"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Work is what a Coordinator tells the controller of the apps it serves.
type Work struct {
	// Apps lists the apps to assign (from the controller's cache).
	Apps func(ctx context.Context) ([]App, error)
	// Stop stops the work of an app this replica no longer serves (its
	// running sync), and returns once it has stopped.
	Stop func(key string)
	// Start starts the work of an app this replica now serves (it queues
	// a reconcile).
	Start func(key string)
	// Assigned, when set, is told after each change of the apps this
	// replica serves: how many it serves, and how many it gained and lost.
	Assigned func(serving, gained, lost int)
}

// Options tune a Coordinator.
type Options struct {
	// Expected is how many replicas are meant to run: until that many are
	// live, or one Lease duration has passed since the start, a replica
	// takes up no app, so that replicas starting together do not each
	// begin with every app (0: no wait).
	Expected int
}

// Coordinator decides which apps this replica serves, and hands them over
// safely: it stops an app's work before it publishes an assignment that
// gives the app away, and takes up an app it gains only once every live
// replica publishes the same assignment.
type Coordinator struct {
	members Members
	work    Work
	opts    Options
	started time.Time
	// tick is how often it looks at the replicas and the apps.
	tick time.Duration
	now  func() time.Time

	dirty atomic.Bool // the apps changed since the last assignment

	mu      sync.Mutex
	idle    *sync.Cond // signalled when an app's reconciles end
	serving map[string]bool
	busy    map[string]int

	// The loop's own state.
	hash      string
	table     map[string]string
	replicas  []string
	renewed   time.Time
	lastError time.Time
}

// NewCoordinator returns a Coordinator for this replica (m.Identity).
func NewCoordinator(m Members, w Work, o Options) *Coordinator {
	c := &Coordinator{
		members: m, work: w, opts: o, tick: time.Second, now: time.Now,
		serving: map[string]bool{}, busy: map[string]int{},
	}
	c.idle = sync.NewCond(&c.mu)
	c.dirty.Store(true)
	return c
}

// Identity names this replica.
func (c *Coordinator) Identity() string { return c.members.Identity }

// Changed says the apps (or their pins) changed: the next tick assigns
// them again.
func (c *Coordinator) Changed() { c.dirty.Store(true) }

// Owns reports whether this replica serves app key now.
func (c *Coordinator) Owns(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serving[key]
}

// Begin starts a piece of work on app key (a reconcile) if this replica
// serves it, and reports whether it does; End ends it. An app is given
// away only when no work on it is under way.
func (c *Coordinator) Begin(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.serving[key] {
		return false
	}
	c.busy[key]++
	return true
}

// End ends a piece of work Begin started.
func (c *Coordinator) End(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy[key]--; c.busy[key] <= 0 {
		delete(c.busy, key)
	}
	c.idle.Broadcast()
}

// Start runs the Coordinator until ctx ends, then stops the work of every
// app it serves and deletes its Lease, so that the others take its apps
// at once.
func (c *Coordinator) Start(ctx context.Context) error {
	log := slog.With("replica", c.members.Identity)
	c.started = c.now()
	t := time.NewTicker(c.tick)
	defer t.Stop()
	for {
		c.step(ctx, log)
		select {
		case <-ctx.Done():
			c.loseAll()
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := c.members.Release(stopCtx); err != nil {
				log.Warn("could not release the replica's lease", "err", err)
			}
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection is false: every replica coordinates.
func (c *Coordinator) NeedLeaderElection() bool { return false }

// step renews the Lease when due, and assigns the apps again when the
// replicas or the apps changed.
func (c *Coordinator) step(ctx context.Context, log *slog.Logger) {
	now := c.now()
	if now.Sub(c.renewed) >= c.members.Duration/3 {
		c.renew(ctx, log, now)
	}
	if now.Sub(c.renewed) > c.members.Duration*2/3 {
		// Unable to renew: others may take the apps soon.
		c.loseAll()
		c.hash = ""
		return
	}
	live, err := c.members.Live(ctx, now)
	if err != nil {
		log.Warn("could not list the controller replicas", "err", err)
		return
	}
	names := make([]string, 0, len(live))
	for _, r := range live {
		names = append(names, r.Name)
	}
	if !slices.Contains(names, c.members.Identity) {
		return // our own Lease is not in the cache yet
	}
	if c.dirty.Swap(false) || !slices.Equal(names, c.replicas) {
		if !c.assign(ctx, log, names, now) {
			c.dirty.Store(true)
			return
		}
	}
	for _, r := range live {
		if r.Assignment != c.hash {
			return // a replica has yet to give up what it loses
		}
	}
	if len(live) < c.opts.Expected && now.Sub(c.started) < c.members.Duration {
		return // the other replicas are still starting
	}
	c.takeUp()
}

// assign computes the assignment for the live replicas names, stops the
// work of every app it gives away, and publishes the new assignment.
func (c *Coordinator) assign(ctx context.Context, log *slog.Logger, names []string, now time.Time) bool {
	apps, err := c.work.Apps(ctx)
	if err != nil {
		log.Warn("could not list the apps to assign", "err", err)
		return false
	}
	c.table, c.replicas = Assign(apps, names), names
	hash := tableHash(c.table)
	lost := 0
	for _, key := range c.servingKeys() {
		if c.table[key] != c.members.Identity {
			c.lose(key)
			lost++
		}
	}
	if lost > 0 {
		c.report(0, lost)
	}
	if hash != c.hash {
		c.hash = hash
		c.renew(ctx, log, now)
	}
	return true
}

// takeUp starts serving every app the agreed assignment gives this
// replica.
func (c *Coordinator) takeUp() {
	var gained []string
	c.mu.Lock()
	for key, owner := range c.table {
		if owner == c.members.Identity && !c.serving[key] {
			c.serving[key] = true
			gained = append(gained, key)
		}
	}
	c.mu.Unlock()
	for _, key := range gained {
		c.work.Start(key)
	}
	if len(gained) > 0 {
		c.report(len(gained), 0)
	}
}

func (c *Coordinator) renew(ctx context.Context, log *slog.Logger, now time.Time) {
	if err := c.members.Renew(ctx, c.hash, now); err != nil {
		if now.Sub(c.lastError) > c.members.Duration {
			log.Warn("could not renew the replica's lease", "err", err)
			c.lastError = now
		}
		return
	}
	c.renewed = now
}

// lose stops serving key: new work is refused, work under way ends, then
// the app's own work stops.
func (c *Coordinator) lose(key string) {
	c.mu.Lock()
	delete(c.serving, key)
	for c.busy[key] > 0 {
		c.idle.Wait()
	}
	c.mu.Unlock()
	c.work.Stop(key)
}

func (c *Coordinator) loseAll() {
	keys := c.servingKeys()
	for _, key := range keys {
		c.lose(key)
	}
	if len(keys) > 0 {
		c.report(0, len(keys))
	}
}

func (c *Coordinator) servingKeys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.serving))
	for k := range c.serving {
		keys = append(keys, k)
	}
	return keys
}

func (c *Coordinator) report(gained, lost int) {
	if c.work.Assigned == nil {
		return
	}
	c.mu.Lock()
	n := len(c.serving)
	c.mu.Unlock()
	c.work.Assigned(n, gained, lost)
}

// tableHash names an assignment: replicas that publish the same hash
// serve the same assignment.
func tableHash(table map[string]string) string {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := fnv.New64a()
	for _, k := range keys {
		_, _ = h.Write([]byte(k + "\x00" + table[k] + "\x00"))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

func sortStrings(s []string) { sort.Strings(s) }

func sortReplicas(rs []Replica) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
}
