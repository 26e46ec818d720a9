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

// memoryTrimmer hands the heap a burst of work (a bootstrap of hundreds of
// apps) left free back to the operating system once the controller is
// idle. Go's background scavenger would take minutes to, and an idle
// controller's resident memory is what users see.
type memoryTrimmer struct {
	interval time.Duration
	// busy reports whether work ran, or runs, since the last call.
	busy func() bool
	// free is the heap that is free and still held.
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

// since reports whether work was counted since the last call.
func (a *activity) since() bool {
	n := a.n.Load()
	return a.seen.Swap(n) != n
}

// heapFree is the Go heap that is free and not yet returned to the
// operating system.
func heapFree() uint64 {
	s := []runtimemetrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// newMemoryTrimmer trims r's process.
func (r *Reconciler) newMemoryTrimmer() memoryTrimmer {
	return memoryTrimmer{
		interval: memoryTrimInterval,
		busy:     func() bool { return r.activity.since() || r.runners.count() > 0 },
		free:     heapFree,
		release:  debug.FreeOSMemory,
	}
}
