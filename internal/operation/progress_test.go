package operation

import (
	"sync"
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// recorder collects what a progressWriter saves.
type recorder struct {
	mu    sync.Mutex
	saved []string
	ch    chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 16)} }

func (r *recorder) save(st *wsync.State) {
	r.mu.Lock()
	r.saved = append(r.saved, st.Message)
	r.mu.Unlock()
	r.ch <- struct{}{}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.saved)
}

func state(msg string, tasks ...wsync.TaskState) wsync.State {
	return wsync.State{Phase: v1alpha1.OperationRunning, Message: msg, Tasks: tasks}
}

func TestProgressWriter(t *testing.T) {
	applied := wsync.TaskState{ID: "cm", Type: v1alpha1.TaskApply, Phase: v1alpha1.TaskApplied}
	hookRunning := wsync.TaskState{ID: "job", Type: v1alpha1.TaskHook, Phase: v1alpha1.TaskRunning}

	t.Run("a sync that ends within the interval writes nothing", func(t *testing.T) {
		r := newRecorder()
		w := newProgressWriter(r.save)
		w.update(state("applying", applied))
		w.update(wsync.State{Phase: v1alpha1.OperationSucceeded, Tasks: []wsync.TaskState{applied}})
		w.stop()
		time.Sleep(2 * ProgressInterval)
		if n := r.count(); n != 0 {
			t.Errorf("saved %d times, want 0", n)
		}
	})
	t.Run("a hook that starts is saved at once", func(t *testing.T) {
		r := newRecorder()
		w := newProgressWriter(r.save)
		defer w.stop()
		w.update(state("hook created", hookRunning))
		if n := r.count(); n != 1 {
			t.Fatalf("saved %d times right after a hook started, want 1", n)
		}
		w.update(state("still waiting", hookRunning))
		if n := r.count(); n != 1 {
			t.Errorf("saved %d times after a message-only change within the interval, want 1", n)
		}
	})
	t.Run("steps without a wait are not saved, and a wait that ended is dropped", func(t *testing.T) {
		r := newRecorder()
		w := newProgressWriter(r.save)
		w.update(state("", applied))
		w.update(state("waiting for Deployment web", applied))
		w.update(state("", applied)) // the wait ended before its save
		time.Sleep(2 * ProgressInterval)
		w.stop()
		if n := r.count(); n != 0 {
			t.Errorf("saved %d times, want 0", n)
		}
	})
	t.Run("a new wait message is saved within the interval", func(t *testing.T) {
		r := newRecorder()
		w := newProgressWriter(r.save)
		defer w.stop()
		w.update(state("waiting for Deployment web", applied))
		select {
		case <-r.ch:
		case <-time.After(10 * ProgressInterval):
			t.Fatal("the wait message was never saved")
		}
		if r.saved[0] != "waiting for Deployment web" {
			t.Errorf("saved %q", r.saved[0])
		}
	})
}

// TestProgressWriterDoesNotBlock: a wait message is written in the
// background, so the sync goes on while the write is under way, and stop
// returns only once that write ended.
func TestProgressWriterDoesNotBlock(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 4)
	var mu sync.Mutex
	var saved []string
	w := newProgressWriter(func(st *wsync.State) {
		started <- struct{}{}
		<-release
		mu.Lock()
		saved = append(saved, st.Message)
		mu.Unlock()
	})
	w.update(state("wave 1 waits"))
	<-started // the save is under way, and blocked
	returned := make(chan struct{})
	go func() {
		w.update(state("wave 2 waits"))
		w.update(state("wave 3 waits"))
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("update waited for a save of a wait message")
	}
	stopped := make(chan struct{})
	go func() { w.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while a save was under way")
	case <-time.After(2 * ProgressInterval):
	}
	close(release)
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if len(saved) != 1 || saved[0] != "wave 1 waits" {
		t.Errorf("saved %q, want only the first message (stop drops the rest)", saved)
	}
}

// TestWaitSaveInterval checks that a sync of many tasks saves its waits
// less often: each save carries every task.
func TestWaitSaveInterval(t *testing.T) {
	tests := map[string]struct {
		tasks int
		want  time.Duration
	}{
		"no task":                    {0, ProgressInterval},
		"a usual app":                {40, ProgressInterval},
		"just under one step":        {progressTasksPerInterval - 1, ProgressInterval},
		"one step":                   {progressTasksPerInterval, 2 * ProgressInterval},
		"the root of 5,000 apps":     {5000, 21 * ProgressInterval},
		"the root of 1,000 apps":     {1000, 5 * ProgressInterval},
		"the root of 1,001 apps ...": {1001, 5 * ProgressInterval},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := waitSaveInterval(tc.tasks); got != tc.want {
				t.Errorf("waitSaveInterval(%d) = %s, want %s", tc.tasks, got, tc.want)
			}
		})
	}
}

// TestProgressWriterBigSync checks that the writer waits the longer
// interval of a big sync before it saves a wait.
func TestProgressWriterBigSync(t *testing.T) {
	tasks := make([]wsync.TaskState, 2*progressTasksPerInterval)
	for i := range tasks {
		tasks[i] = wsync.TaskState{ID: "app-" + string(rune('a'+i%26)), Type: v1alpha1.TaskApply, Phase: v1alpha1.TaskApplied}
	}
	r := newRecorder()
	w := newProgressWriter(r.save)
	defer w.stop()
	w.update(state("waiting for 500 apps", tasks...))
	time.Sleep(ProgressInterval + ProgressInterval/2)
	if n := r.count(); n != 0 {
		t.Errorf("a sync of %d tasks saved its wait %d times within %s, want 0 before %s",
			len(tasks), n, ProgressInterval+ProgressInterval/2, waitSaveInterval(len(tasks)))
	}
	select {
	case <-r.ch:
	case <-time.After(2 * waitSaveInterval(len(tasks))):
		t.Errorf("the wait of a sync of %d tasks was not saved within %s", len(tasks), 2*waitSaveInterval(len(tasks)))
	}
}
