package controller

import (
	stdsync "sync"
	"time"
)

// parentRefreshMin is the shortest time between two refreshes of a parent
// app for its children's changes; a parent whose refreshes take long is
// refreshed less often (parentRefreshFactor times its last reconcile).
const (
	parentRefreshMin    = 250 * time.Millisecond
	parentRefreshFactor = 4
)

// parentPace spaces out the refreshes a parent app (an app of apps) gets
// for its children's changes. Each refresh of a parent compares every
// child, and in a bootstrap hundreds of children change every second: a
// root of 1,000 children was refreshed 500 times in a 10 s bootstrap, one
// comparison of all its children per child that reported in. Now a change
// after a quiet spell refreshes the parent at once; changes that follow
// within the interval are taken in together by one refresh at its end
// (the parent's sync does not wait on these refreshes: its waves watch
// the children themselves).
type parentPace struct {
	mu    stdsync.Mutex
	slots map[string]paceSlot
}

// paceSlot is one parent's pacing.
type paceSlot struct {
	// next is when the parent's next refresh may start.
	next time.Time
	// trailing says a refresh is put off until next.
	trailing bool
	// took is how long the parent's last reconcile took.
	took time.Duration
}

func newParentPace() *parentPace { return &parentPace{slots: map[string]paceSlot{}} }

// delay returns how long to put off the refresh of parent that a child's
// change at now asks for: zero to refresh at once.
func (p *parentPace) delay(parent string, now time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.slots[parent]
	interval := max(parentRefreshMin, parentRefreshFactor*s.took)
	switch {
	case now.Before(s.next):
		// A refresh at next takes this change in.
		s.trailing = true
	case s.trailing && now.Before(s.next.Add(interval)):
		// The refresh put off until next has started: the next one may
		// start an interval after it.
		s.next = s.next.Add(interval)
	default:
		s.next, s.trailing = now.Add(interval), false
		p.slots[parent] = s
		return 0
	}
	p.slots[parent] = s
	return s.next.Sub(now)
}

// observe records how long a reconcile of app took, when app is a paced
// parent.
func (p *parentPace) observe(app string, took time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.slots[app]; ok {
		s.took = took
		p.slots[app] = s
	}
}

// forget drops a deleted app.
func (p *parentPace) forget(app string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.slots, app)
}
