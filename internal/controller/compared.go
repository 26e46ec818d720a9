package controller

import (
	stdsync "sync"
	"time"
)

// comparedTimes remembers when the controller last compared each app. A
// comparison that changes nothing but the timestamps is not always
// written (see refreshIfDue), so status.reconciledAt may be older.
type comparedTimes struct {
	mu stdsync.Mutex
	at map[string]time.Time
	// took is how long each app's last comparison took.
	took map[string]time.Duration
}

// setTook records how long app name's comparison took.
func (c *comparedTimes) setTook(name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.took = setIn(c.took, name, d)
}

// tookLast is how long app name's last comparison took; 0 when unknown.
func (c *comparedTimes) tookLast(name string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.took[name]
}

func (c *comparedTimes) set(name string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = setIn(c.at, name, t)
}

// setIn sets m[k] = v, making m when it is nil.
func setIn[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m
}

// get returns when app name was last compared by this controller.
func (c *comparedTimes) get(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[name]
	return t, ok
}

func (c *comparedTimes) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.at, name)
	delete(c.took, name)
}
