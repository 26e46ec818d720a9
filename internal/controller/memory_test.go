package controller

import (
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"testing"
	"time"
)

func TestMemoryTrimmer(t *testing.T) {
	tests := map[string]struct {
		busy    bool
		free    uint64
		release bool
	}{
		"idle with a burst's heap left free releases it": {free: 64 << 20, release: true},
		"busy keeps the heap for the work":               {busy: true, free: 64 << 20},
		"idle with little free does nothing":             {free: 1 << 20},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			released := false
			m := memoryTrimmer{
				busy:    func() bool { return tc.busy },
				free:    func() uint64 { return tc.free },
				release: func() { released = true },
			}
			if err := m.tick(); err != nil {
				t.Fatal(err)
			}
			if released != tc.release {
				t.Errorf("released = %v, want %v", released, tc.release)
			}
		})
	}
}

// TestMemoryTrimmerFiles: the executable's pages go back on the first idle
// tick after the start and after each busy interval, once: an idle
// controller does not release, and fault back, its working pages every
// interval.
func TestMemoryTrimmerFiles(t *testing.T) {
	tests := map[string]struct {
		busy []bool // one tick each
		want []bool // whether the tick released the files' pages
	}{
		"start-up's pages on the first idle tick": {busy: []bool{false, false, false}, want: []bool{true, false, false}},
		"not while busy":      {busy: []bool{true, true}, want: []bool{false, false}},
		"after a burst, once": {busy: []bool{false, true, false, false}, want: []bool{true, false, true, false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var busy, released bool
			m := memoryTrimmer{
				busy:         func() bool { return busy },
				free:         func() uint64 { return 0 },
				release:      func() { t.Error("released a heap with nothing free") },
				releaseFiles: func() error { released = true; return nil },
				filesDue:     true, // as run starts it
			}
			for i, b := range tc.busy {
				busy, released = b, false
				if err := m.tick(); err != nil {
					t.Fatal(err)
				}
				if released != tc.want[i] {
					t.Errorf("tick %d (busy %v): released the files' pages = %v, want %v", i, b, released, tc.want[i])
				}
			}
		})
	}
}

// TestTrimBusy: a refresh round of 1,000 apps (about 15 reconciles a
// second) leaves the controller idle enough to trim; a sync, or the rounds
// of thousands of apps, do not.
func TestTrimBusy(t *testing.T) {
	interval := int64(memoryTrimInterval / time.Second)
	tests := map[string]struct {
		reconciles int64
		syncing    bool
		busy       bool
	}{
		"nothing":                    {},
		"a round of 1,000 apps":      {reconciles: 15 * interval},
		"a round of 5,000 apps":      {reconciles: 80 * interval, busy: true},
		"a sync with few reconciles": {reconciles: 3, syncing: true, busy: true},
		"just under the bound":       {reconciles: memoryTrimBusy - 1},
		"at the bound":               {reconciles: memoryTrimBusy, busy: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := trimBusy(tc.reconciles, tc.syncing); got != tc.busy {
				t.Errorf("trimBusy(%d, %v) = %v, want %v", tc.reconciles, tc.syncing, got, tc.busy)
			}
		})
	}
}

func TestActivitySince(t *testing.T) {
	var a activity
	if n := a.since(); n != 0 {
		t.Errorf("no work counted, yet since reports %d", n)
	}
	a.add()
	a.add()
	if n := a.since(); n != 2 {
		t.Errorf("two reconciles counted, since reports %d", n)
	}
	if n := a.since(); n != 0 {
		t.Errorf("since reports the same work twice (%d)", n)
	}
}

// TestHeapReclaimableCountsGarbage: garbage a burst left and no collection has
// freed yet counts as free: with little allocated afterwards the
// collector does not run, and it would stay resident. The garbage is what
// heapReclaimable counts beyond the free heap read just after it (other
// goroutines of the package may take free heap or the scavenger release
// some meanwhile, which only lowers the free heap read second); the
// runtime's accounting is a little under the 64 MiB allocated.
func TestHeapReclaimableCountsGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	for range 64 {
		sink = make([]byte, 1<<20)
	}
	sink = nil
	got := heapReclaimable()
	free := []runtimemetrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	runtimemetrics.Read(free)
	if garbage := int64(got) - int64(free[0].Value.Uint64()); garbage < 60<<20 {
		t.Errorf("heapReclaimable = %d MiB, %d MiB beyond the free heap after 64 MiB of garbage, want the garbage (at least 60 MiB) counted", got>>20, garbage>>20)
	}
}

// sink keeps the burst's allocations on the heap.
var sink []byte
