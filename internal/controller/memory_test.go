package controller

import (
	"runtime"
	"runtime/debug"
	"testing"
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
			m.tick()
			if released != tc.release {
				t.Errorf("released = %v, want %v", released, tc.release)
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
// collector does not run, and it would stay resident.
func TestHeapReclaimableCountsGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	before := heapReclaimable()
	for range 64 {
		sink = make([]byte, 1<<20)
	}
	sink = nil
	if got := heapReclaimable(); got < before+48<<20 {
		t.Errorf("heapReclaimable = %d MiB after 64 MiB of garbage (%d MiB before), want the garbage counted", got>>20, before>>20)
	}
}

// sink keeps the burst's allocations on the heap.
var sink []byte
