package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ErrStopped is Run's error when the sync stopped at a safe point because
// Options.Stop asked it to (a new revision supersedes it). The state has
// ended Failed and its message says where the sync stopped.
var ErrStopped = errors.New("sync stopped: superseded")

// errStopWait ends a step's wait at a safe point; Run turns it into the
// stop.
var errStopWait = errors.New("wait stopped")

// ErrTerminated is Run's error when Options.Terminate ended the sync; the
// state has ended Failed, "Operation terminated".
var ErrTerminated = errors.New("sync terminated")

// errTerminateWait ends a step's wait at once; Run turns it into the
// termination.
var errTerminateWait = errors.New("wait terminated")

// terminateRequested reports whether Options.Terminate was closed.
func (e *Executor) terminateRequested() bool {
	if e.opts.Terminate == nil {
		return false
	}
	select {
	case <-e.opts.Terminate:
		return true
	default:
		return false
	}
}

// safeToStop reports whether a sync in st may stop now and leave nothing
// half done: it is running, not failing (its SyncFail hooks must run), and
// no hook it created is still running (a hook's result is read and its
// finalizer released before the sync lets it go, so each hook runs once and
// is recorded once). Between steps and while a step's objects are awaited
// it may; while a step writes, Run does not look.
func safeToStop(st *State) bool {
	if st.Phase.Completed() || st.Failure != "" {
		return false
	}
	return !slices.ContainsFunc(st.Tasks, func(t TaskState) bool {
		return t.Type == v1alpha1.TaskHook && t.Phase == v1alpha1.TaskRunning
	})
}

// stopRequested reports whether Options.Stop was closed.
func (e *Executor) stopRequested() bool {
	if e.opts.Stop == nil {
		return false
	}
	select {
	case <-e.opts.Stop:
		return true
	default:
		return false
	}
}

// stop ends the sync where it stands: Failed, saying which step it waited
// on. Objects already written stay; nothing is deleted.
func (e *Executor) stop(ctx context.Context, st *State) error {
	message := "stopped: superseded by a new revision"
	if st.Message != "" {
		message = fmt.Sprintf("%s while in %s wave %d, %s", message, st.SyncPhase, st.Wave, st.Message)
	}
	now := time.Now().UTC()
	st.Phase, st.Message, st.FinishedAt, st.Stalled = v1alpha1.OperationFailed, message, &now, ""
	e.events.add(ctx, Event{Type: EventFailed, Message: message})
	return ErrStopped
}

// errDeadline ends a wait at Options.Deadline; Run turns it into the
// timeout.
var errDeadline = errors.New("sync deadline reached")

// deadlinePassed reports whether Options.Deadline has come.
func (e *Executor) deadlinePassed() bool {
	return !e.opts.Deadline.IsZero() && !time.Now().Before(e.opts.Deadline)
}

// deadlineTimer fires at Options.Deadline; nil (never) without one.
func (e *Executor) deadlineTimer() (<-chan time.Time, func()) {
	if e.opts.Deadline.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(e.opts.Deadline))
	return t.C, func() { t.Stop() }
}

// timeout ends the sync at its deadline: Failed, with the reason and what
// it waited for. The hooks it runs are released from the hook finalizer
// (they go on, as in Argo CD, and nothing waits on them); objects written
// stay.
func (e *Executor) timeout(ctx context.Context, st *State) error {
	for i := range st.Tasks {
		ts := &st.Tasks[i]
		if ts.Type != v1alpha1.TaskHook || ts.Phase != v1alpha1.TaskRunning {
			continue
		}
		if err := e.cluster.RemoveFinalizer(ctx, taskRef(*ts), FinalizerHook); err != nil {
			ts.Message = strings.TrimSpace(ts.Message + "; failed to remove hook finalizer: " + err.Error())
		}
		ts.Phase, ts.Result = v1alpha1.TaskFailed, v1alpha1.ResultCodeSyncFailed
		ts.Message = strings.TrimSpace(ts.Message + "; " + e.opts.DeadlineReason)
	}
	message := e.opts.DeadlineReason
	if message == "" {
		message = "sync deadline reached"
	}
	if st.Message != "" {
		message += " while in " + string(st.SyncPhase) + " wave " + strconv.Itoa(st.Wave) + ", " + st.Message
	}
	now := time.Now().UTC()
	st.Phase, st.Message, st.FinishedAt, st.Stalled = v1alpha1.OperationFailed, message, &now, ""
	e.events.add(ctx, Event{Type: EventFailed, Message: message})
	return nil
}
