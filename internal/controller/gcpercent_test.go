package controller

import (
	"context"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	tests := map[string]struct {
		live uint64
		want int
	}{
		"an empty heap keeps Go's default":             {live: 0, want: 100},
		"1,000 apps (50 MB live) keep Go's default":    {live: 50 << 20, want: 100},
		"the headroom itself keeps Go's default":       {live: gcHeadroom, want: 100},
		"twice the headroom is the minimum":            {live: 2 * gcHeadroom, want: 50},
		"a heap between leaves the headroom":           {live: 80 << 20, want: 80},
		"5,000 apps (200 MB live) stay at the minimum": {live: 200 << 20, want: 50},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := gcPercentFor(tc.live); got != tc.want {
				t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
			}
		})
	}
}

// TestGCTunerTick: the tuner follows the live heap, leaves changes below a
// step alone unless they reach a bound, and sets nothing when nothing
// changes.
func TestGCTunerTick(t *testing.T) {
	steps := []struct {
		live uint64
		sets []int // what the tick set
	}{
		{live: 40 << 20},                   // 100 already
		{live: 80 << 20, sets: []int{80}},  // headroom 64 MiB of 80
		{live: 78 << 20},                   // 82: less than a step
		{live: 90 << 20, sets: []int{71}},  // a step
		{live: 300 << 20, sets: []int{50}}, // the minimum
		{live: 300 << 20},                  // unchanged
		{live: 10 << 20, sets: []int{100}}, // back to the default
		{live: 66 << 20},                   // 96: less than a step
		{live: 120 << 20, sets: []int{53}}, // a step
		{live: 200 << 20, sets: []int{50}}, // less than a step, but the minimum
	}
	var set []int
	tu := &gcTuner{set: func(p int) { set = append(set, p) }, current: gcPercentMax}
	for i, s := range steps {
		set = nil
		tu.live = func() uint64 { return s.live }
		tu.tick()
		if len(set) != len(s.sets) || (len(set) == 1 && set[0] != s.sets[0]) {
			t.Errorf("step %d (%d MiB live): set %v, want %v", i, s.live>>20, set, s.sets)
		}
	}
}

// TestGCTunerStop: a tuner that changed the percent sets Go's default again
// when it stops; one that did not sets nothing.
func TestGCTunerStop(t *testing.T) {
	for _, current := range []int{gcPercentMax, 60} {
		var set []int
		tu := &gcTuner{interval: time.Hour, live: func() uint64 { return 0 },
			set: func(p int) { set = append(set, p) }, current: current}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		tu.run(ctx)
		var want []int
		if current != gcPercentMax {
			want = []int{gcPercentMax}
		}
		if len(set) != len(want) || (len(set) == 1 && set[0] != want[0]) {
			t.Errorf("stopped at %d: set %v, want %v", current, set, want)
		}
	}
}
