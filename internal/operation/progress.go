package operation

import (
	stdsync "sync"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// ProgressInterval is how long a sync's new wait message may wait before it
// is written to the app's status.
const ProgressInterval = time.Second

// progressTasksPerInterval stretches the interval for big syncs: a save
// carries every task's result, and every watcher of Applications decodes
// it, so an app of thousands of objects (the root of thousands of apps)
// saving its wait every second would cost more than its sync. Each
// progressTasksPerInterval tasks add one ProgressInterval.
const progressTasksPerInterval = 250

// waitSaveInterval is how long a wait of a sync of n tasks may wait before
// it is saved.
func waitSaveInterval(n int) time.Duration {
	return ProgressInterval * time.Duration(1+n/progressTasksPerInterval)
}

// progressWriter saves a running sync's progress to the app's status: at
// once, before the sync goes on, when a hook was created or ended (what a
// resumed sync must know); a wait (its explanation, or a stall) in the
// background at most every ProgressInterval (longer for syncs of many
// tasks: waitSaveInterval), so the next wave never waits for a write. Other steps are not saved: a resumed sync redoes them
// safely, and a sync that only applies ends with one write, its result.
// The final state is not its to write: stop it, then record the result.
type progressWriter struct {
	save func(*wsync.State)

	mu      stdsync.Mutex
	idle    *stdsync.Cond // signalled when a save ends
	saving  bool
	saved   map[string]v1alpha1.TaskPhase
	savedAt time.Time
	pending *wsync.State
	timer   *time.Timer
	stopped bool
}

// newProgressWriter returns a writer whose first save comes no sooner than
// ProgressInterval after the sync started: a sync that ends sooner writes
// only its result.
func newProgressWriter(save func(*wsync.State)) *progressWriter {
	w := &progressWriter{save: save, saved: map[string]v1alpha1.TaskPhase{}, savedAt: time.Now()}
	w.idle = stdsync.NewCond(&w.mu)
	return w
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
	durable := w.durable(&st)
	if !durable && st.Message == "" && st.Stalled == "" {
		w.pending = nil // no wait to explain; an earlier one is over
		return
	}
	if durable {
		for w.saving {
			w.idle.Wait()
		}
		w.saveLocked()
		return
	}
	w.scheduleLocked()
}

// checkpoint saves st at once, before the sync goes on (best effort: a
// failed write is logged, as other progress writes are).
func (w *progressWriter) checkpoint(st wsync.State) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	for w.saving {
		w.idle.Wait()
	}
	w.pending = &st
	w.saveLocked()
}

// scheduleLocked arranges a background save of the pending state once
// its waitSaveInterval has passed since the last one.
func (w *progressWriter) scheduleLocked() {
	if w.timer != nil || w.saving || w.pending == nil || w.stopped {
		return // the running save schedules the next when it ends
	}
	wait := waitSaveInterval(len(w.pending.Tasks))
	w.timer = time.AfterFunc(max(wait-time.Since(w.savedAt), 0), w.flush)
}

// durable reports whether a hook was created or ended since the last save:
// what a resumed sync must know so that no hook runs twice. Everything
// else a resumed sync redoes safely (an apply of the same object changes
// nothing, a pruned object is gone from the plan), so it is written at
// most every ProgressInterval, for the explained waits.
func (w *progressWriter) durable(st *wsync.State) bool {
	for _, t := range st.Tasks {
		if t.Type == v1alpha1.TaskHook && t.Phase != w.saved[t.ID] {
			switch t.Phase {
			case v1alpha1.TaskPending, v1alpha1.TaskDryRunOK:
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
	w.timer = nil
	if !w.saving {
		w.saveLocked()
	}
}

// saveLocked writes the pending state, unlocking while it does; then it
// schedules a save of whatever came meanwhile.
func (w *progressWriter) saveLocked() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.stopped || w.pending == nil {
		return
	}
	st := w.pending
	w.pending = nil
	w.saving = true
	w.mu.Unlock()
	w.save(st)
	w.mu.Lock()
	w.saving = false
	w.savedAt = time.Now()
	clear(w.saved)
	for _, t := range st.Tasks {
		w.saved[t.ID] = t.Phase
	}
	w.idle.Broadcast()
	w.scheduleLocked()
}

// stop drops any unsaved progress and waits for a save under way; no
// write happens after it returns.
func (w *progressWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.pending = nil
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	for w.saving {
		w.idle.Wait()
	}
}
