package controller

import (
	stdsync "sync"
	"time"

	wsync "github.com/wavecd/wavecd/internal/sync"
)

// progressInterval is how long a sync's new wait message may wait before it
// is written to the app's status.
const progressInterval = 250 * time.Millisecond

// progressWriter saves a running sync's progress to the app's status: at
// once when a task changed the cluster or ended (what a resumed sync must
// know), otherwise at most every progressInterval, so a wave of quick
// steps costs one write instead of one per step. The final state is not
// its to write: stop it, then record the result.
type progressWriter struct {
	save func(*wsync.State)

	mu      stdsync.Mutex
	saved   map[string]wsync.TaskPhase
	savedAt time.Time
	pending *wsync.State
	timer   *time.Timer
	stopped bool
}

// newProgressWriter returns a writer whose first save comes no sooner than
// progressInterval after the sync started: a sync that ends sooner writes
// only its result.
func newProgressWriter(save func(*wsync.State)) *progressWriter {
	return &progressWriter{save: save, saved: map[string]wsync.TaskPhase{}, savedAt: time.Now()}
}

// update takes the executor's latest state.
func (w *progressWriter) update(st wsync.State) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || st.Phase.Completed() {
		w.pending = nil
		return
	}
	w.pending = &st
	wait := progressInterval - time.Since(w.savedAt)
	if w.durable(&st) || wait <= 0 {
		w.flushLocked()
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(wait, w.flush)
	}
}

// durable reports whether a hook was created or ended since the last save:
// what a resumed sync must know so that no hook runs twice. Everything
// else a resumed sync redoes safely (an apply of the same object changes
// nothing, a pruned object is gone from the plan), so it is written at
// most every progressInterval, for the explained waits.
func (w *progressWriter) durable(st *wsync.State) bool {
	for _, t := range st.Tasks {
		if t.Type == wsync.TaskHook && t.Phase != w.saved[t.ID] {
			switch t.Phase {
			case wsync.TaskPending, wsync.TaskDryRunOK:
			default:
				return true
			}
		}
	}
	return false
}

func (w *progressWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *progressWriter) flushLocked() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.stopped || w.pending == nil {
		return
	}
	st := w.pending
	w.pending = nil
	w.save(st)
	w.savedAt = time.Now()
	clear(w.saved)
	for _, t := range st.Tasks {
		w.saved[t.ID] = t.Phase
	}
}

// stop drops any unsaved progress; no write happens after it returns.
func (w *progressWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.pending = nil
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}
