package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrStopped is Run's error when the sync stopped at a safe point because
// Options.Stop asked it to (a new revision supersedes it). The state has
// ended Failed and its message says where the sync stopped.
var ErrStopped = errors.New("sync stopped: superseded")

// errStopWait ends a step's wait at a safe point; Run turns it into the
// stop.
var errStopWait = errors.New("wait stopped")

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
		return t.Type == TaskHook && t.Phase == TaskRunning
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
	st.Phase, st.Message, st.FinishedAt, st.Stalled = OperationFailed, message, &now, ""
	e.events.add(ctx, Event{Type: EventFailed, Message: message})
	return ErrStopped
}
