package controller

import (
	"testing"
	"time"
)

// TestParentPace: a child's change after a quiet spell refreshes its parent
// at once; the changes that follow within the interval are put off to its
// end, together; a burst gets one refresh per interval; a parent whose
// reconciles take long is refreshed less often; parents are paced apart.
func TestParentPace(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type change struct {
		parent string
		at     int // ms
		took   int // ms: the parent's last reconcile, observed before the change
		want   int // ms of delay
	}
	tests := map[string][]change{
		"a change after a quiet spell is at once": {
			{parent: "root", at: 0, want: 0},
			{parent: "root", at: 1000, want: 0},
		},
		"changes within the interval wait for its end, together": {
			{parent: "root", at: 0, want: 0},
			{parent: "root", at: 10, want: 240},
			{parent: "root", at: 200, want: 50},
		},
		"a burst gets one refresh per interval": {
			{parent: "root", at: 0, want: 0},
			{parent: "root", at: 100, want: 150},  // at 250
			{parent: "root", at: 260, want: 240},  // the one at 250 ran: at 500
			{parent: "root", at: 400, want: 100},  // at 500
			{parent: "root", at: 510, want: 240},  // at 750
			{parent: "root", at: 1100, want: 0},   // quiet since 750
			{parent: "root", at: 1200, want: 150}, // at 1350
		},
		"a slow parent is refreshed less often": {
			{parent: "root", at: 0, want: 0},
			{parent: "root", at: 100, took: 200, want: 150}, // the slot was set before
			{parent: "root", at: 300, want: 750},            // an interval of 800 after 250
			{parent: "root", at: 2000, want: 0},
			{parent: "root", at: 2100, want: 700},
		},
		"parents are paced apart": {
			{parent: "a", at: 0, want: 0},
			{parent: "b", at: 10, want: 0},
			{parent: "a", at: 20, want: 230},
			{parent: "b", at: 30, want: 230},
		},
	}
	for name, changes := range tests {
		t.Run(name, func(t *testing.T) {
			p := newParentPace()
			start := time.Unix(1000, 0)
			for i, c := range changes {
				if c.took > 0 {
					p.observe(c.parent, ms(c.took))
				}
				if got := p.delay(c.parent, start.Add(ms(c.at))); got != ms(c.want) {
					t.Errorf("change %d (%s at %d ms): delay %v, want %v", i, c.parent, c.at, got, ms(c.want))
				}
			}
		})
	}
	var none *parentPace
	if d := none.delay("root", time.Now()); d != 0 {
		t.Errorf("no pacing: delay %v, want 0", d)
	}
}
