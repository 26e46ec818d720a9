package controller

import (
	"context"
	"log/slog"
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
// controller busy: fifty a second. Fewer are the periodic refreshes of
// an idle installation: a thousand apps refresh every two to three
// minutes, in rounds of about fifteen a second after a bootstrap (the
// apps' jitter spreads them over a minute). A round grows the heap by its
// garbage (5 MiB at 1,000 apps), which then stays resident until the next
// trim: with ten a second as the bound, that was after the round, so an
// idle controller's memory rose with every round.
const memoryTrimBusy = 50 * int64(memoryTrimInterval/time.Second)

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
	// releaseFiles, when set, hands back the resident pages of the
	// process's executable (filepages_linux.go) on the first idle tick
	// after the start and after every busy interval: what start-up or a
	// burst touched once and no longer uses.
	releaseFiles func() error
	// filesDue is whether work ran since the files' pages were released.
	filesDue bool
}

// run trims after every idle interval until ctx ends.
func (m *memoryTrimmer) run(ctx context.Context) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	m.filesDue = true // start-up's pages
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := m.tick(); err != nil {
				slog.Debug("keeping the executable's resident pages", "reason", err.Error())
			}
		}
	}
}

// tick releases free memory when the controller was idle.
func (m *memoryTrimmer) tick() error {
	if m.busy() {
		m.filesDue = true
		return nil
	}
	if m.free() >= memoryTrimMin {
		m.release()
	}
	if !m.filesDue || m.releaseFiles == nil {
		return nil
	}
	m.filesDue = false
	return m.releaseFiles()
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

// trimBusy reports whether reconciles in an interval, or a running sync,
// make the controller too busy to trim: the heap is then the work's.
func trimBusy(reconciles int64, syncing bool) bool {
	return syncing || reconciles >= memoryTrimBusy
}

// trimOptions say what a memoryTrimmer may hand back.
type trimOptions struct {
	// Files also releases the resident pages of the executable, which are
	// the process's: for a process that runs one controller.
	Files bool
}

// newMemoryTrimmer trims the process of a controller whose reconciles
// activity counts and in which syncing says whether a sync runs.
func newMemoryTrimmer(activity *activity, syncing func() bool, opts trimOptions) *memoryTrimmer {
	m := &memoryTrimmer{
		interval: memoryTrimInterval,
		busy:     func() bool { return trimBusy(activity.since(), syncing()) },
		free:     heapReclaimable,
		release:  debug.FreeOSMemory,
	}
	if opts.Files {
		m.releaseFiles = releaseFilePages
	}
	return m
}
