package controller

import (
	"context"
	"os"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"time"
)

// The collector's headroom (GOGC) by the size of the live heap. Go's
// default lets the heap grow to twice the live heap before the next
// collection, and what outlives a burst of work (a bootstrap of thousands
// of apps: the apps' cache, each app's last render) ends up scattered over
// the spans of that whole goal: the resident memory after the burst
// follows the goal, not the live heap. Up to gcHeadroom of live heap the
// default stands (a 1,000-app installation lives in 50 MB, and its CPU
// counts more than tens of MiB); above it the headroom stays gcHeadroom,
// down to gcPercentMin. At 5,000 apps (150 to 230 MB live) that took the
// settled memory from 336-341 to 261-295 MiB and the peak from 530-572 to
// 375-408 MiB, with no CPU difference visible beside the hour's noise.
const (
	gcHeadroom     = 64 << 20
	gcPercentMax   = 100
	gcPercentMin   = 50
	gcTuneInterval = time.Second
	// gcPercentStep is the least change worth making.
	gcPercentStep = 5
)

// gcPercentFor returns the GOGC that leaves gcHeadroom above a live heap
// of live bytes, within [gcPercentMin, gcPercentMax].
func gcPercentFor(live uint64) int {
	if live <= gcHeadroom {
		return gcPercentMax
	}
	return max(gcPercentMin, int(gcHeadroom*100/live))
}

// gcTuner sets the collector's percent from the live heap, every
// interval, and Go's default again when it stops. It is off when the GOGC
// environment variable is set: the user's choice stands.
type gcTuner struct {
	interval time.Duration
	// live is the heap live at the last collection.
	live func() uint64
	// set sets the percent.
	set     func(int)
	current int
}

// tuneGC runs a gcTuner for the process until ctx ends, unless GOGC is set.
func tuneGC(ctx context.Context) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return
	}
	set := func(p int) { debug.SetGCPercent(p) }
	t := &gcTuner{interval: gcTuneInterval, live: heapLive, set: set, current: gcPercentMax}
	t.run(ctx)
}

func (t *gcTuner) run(ctx context.Context) {
	tick := time.NewTicker(t.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if t.current != gcPercentMax {
				t.set(gcPercentMax)
			}
			return
		case <-tick.C:
			t.tick()
		}
	}
}

// tick sets the percent the live heap asks for, when it differs by
// gcPercentStep or more from the current one, or is a bound.
func (t *gcTuner) tick() {
	want := gcPercentFor(t.live())
	bound := want == gcPercentMax || want == gcPercentMin
	if want == t.current || (!bound && abs(want-t.current) < gcPercentStep) {
		return
	}
	t.set(want)
	t.current = want
}

func abs(n int) int { return max(n, -n) }

// heapLive is the heap marked live by the last collection.
func heapLive() uint64 {
	s := []runtimemetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	runtimemetrics.Read(s)
	if s[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
