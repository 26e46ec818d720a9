package controller

import (
	"context"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"sync/atomic"
	"time"
)

// memoryTrimInterval is how often the controller looks for memory that a
// burst of work left free.
const memoryTrimInterval = 30 * time.Second

// memoryTrimMin is the free heap worth handing back at once.
const memoryTrimMin = 8 << 20

// memoryTrimBusy is how many reconciles in a memoryTrimInterval make the
// controller busy: ten a second. Fewer are the trickle of an idle
// installation's periodic refreshes (a thousand apps refresh every three
// minutes, about six a second), which allocate too little for Go's
// collector to run and lower its goal, so the heap a burst left behind
// stays resident unless it is handed back.
const memoryTrimBusy = 10 * int64(memoryTrimInterval/time.Second)

// memoryTrimmer hands the heap a burst of work (a bootstrap of hundreds of
// apps) left free back to the operating system once the controller is
// idle. Go's background scavenger would take minutes to (or never, while
// the collector's goal stays where the burst put it), and an idle
// controller's resident memory is what users see.
type memoryTrimmer struct {
	interval time.Duration
	// busy reports whether much work ran, or runs, since the last call.
	busy func() bool
	// free is the heap that is free or garbage, and still held.
	free func() uint64
	// release returns it.
	release func()
}

// run trims after every idle interval until ctx ends.
func (m memoryTrimmer) run(ctx context.Context) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.tick()
		}
	}
}

// tick releases free memory when the controller was idle.
func (m memoryTrimmer) tick() {
	if m.busy() || m.free() < memoryTrimMin {
		return
	}
	m.release()
}

// activity counts the controller's work, for memoryTrimmer.
type activity struct {
	n    atomic.Int64
	seen atomic.Int64
}

func (a *activity) add() { a.n.Add(1) }

// since returns how much work was counted since the last call.
func (a *activity) since() int64 {
	n := a.n.Load()
	return n - a.seen.Swap(n)
}

// heapReclaimable is the Go heap that is free and not yet returned to the
// operating system, or that holds objects that were not live at the last
// collection (garbage the next collection frees).
func heapReclaimable() uint64 {
	s := []runtimemetrics.Sample{
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	runtimemetrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != runtimemetrics.KindUint64 {
			return 0
		}
	}
	free, objects, live := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	if objects > live {
		free += objects - live
	}
	return free
}

// syncing reports whether a sync runs: the controller is busy, and the API
// server's time goes to the syncs (the memory trimmer and the pace of
// Events ask).
func (r *Reconciler) syncing() bool { return r.runners.count() > 0 }

// newMemoryTrimmer trims r's process.
func (r *Reconciler) newMemoryTrimmer() memoryTrimmer {
	return memoryTrimmer{
		interval: memoryTrimInterval,
		busy:     func() bool { return r.activity.since() >= memoryTrimBusy || r.syncing() },
		free:     heapReclaimable,
		release:  debug.FreeOSMemory,
	}
}
