package sync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// ErrAwaitingPruneConfirmation is returned by Run when a prune of an object
// marked Prune=confirm waits for Options.PruneConfirmed; the state stays
// Running and Run continues once called again with the confirmation.
var ErrAwaitingPruneConfirmation = errors.New("waiting for pruning confirmation")

// Executor runs a plan against a cluster as a state machine: it observes
// the saved state, picks the next action and runs it, until the sync ends.
type Executor struct {
	cluster  *kube.Cluster
	opts     Options
	health   *health.Assessor
	tracking kube.Tracking
	plan     *Plan
	byID     map[string]*Task
	events   eventLog
	// namespaces holds the namespace this run's CreateNamespace found or
	// created, so the dry run need not read it again.
	namespaces map[string]bool
	// checkpointed is set once the state is known to be saved: resumed,
	// or handed to Options.Checkpoint.
	checkpointed bool
}

// NewExecutor returns an executor of plan on cluster.
func NewExecutor(cluster *kube.Cluster, plan *Plan, opts Options) (*Executor, error) {
	if opts.Health == nil {
		h, err := health.New(health.Options{})
		if err != nil {
			return nil, fmt.Errorf("default health assessor: %w", err)
		}
		opts.Health = h
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	e := &Executor{
		cluster:  cluster,
		opts:     opts,
		health:   opts.Health,
		tracking: kube.Tracking{Method: opts.Tracking, AppName: opts.AppName, InstallationID: opts.InstallationID},
		plan:     plan,
		byID:     map[string]*Task{},
		events:   eventLog{notify: opts.OnEvent},
	}
	for _, t := range plan.Tasks {
		e.byID[t.ID] = t
	}
	return e, nil
}

// Events returns the events recorded so far, in order.
func (e *Executor) Events() []Event { return e.events.list() }

// Run runs the sync until it ends, saving progress in st. A zero st starts a
// new sync; a st saved by an earlier Run (cancelled, or of a controller that
// restarted) resumes it: finished tasks are not run again, a hook that was
// created is waited on, not recreated. Run returns ctx's error when it is
// cancelled, ErrAwaitingPruneConfirmation when a prune needs confirmation,
// and nil when the sync ended (st.Phase tells how).
func (e *Executor) Run(ctx context.Context, st *State) error {
	if st.ID == "" {
		e.start(ctx, st)
	} else {
		e.resume(ctx, st)
		e.checkpointed = true // it was saved, or it could not be resumed
	}
	if err := e.prepare(ctx, st); err != nil {
		return err
	}
	for !st.Phase.Completed() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.terminateRequested() {
			if err := e.Terminate(ctx, st); err != nil {
				return err
			}
			return ErrTerminated
		}
		if e.stopRequested() && safeToStop(st) {
			err := e.stop(ctx, st)
			e.progress(st)
			return err
		}
		if e.deadlinePassed() {
			err := e.timeout(ctx, st)
			e.progress(st)
			return err
		}
		action := e.next(st)
		err := action(ctx, st)
		e.progress(st)
		if err != nil && !errors.Is(err, errStopWait) && !errors.Is(err, errDeadline) && !errors.Is(err, errTerminateWait) {
			return err
		}
	}
	return nil
}

// action is one step of the state machine.
type action func(ctx context.Context, st *State) error

// next observes st and picks the next action.
func (e *Executor) next(st *State) action {
	switch {
	case slices.ContainsFunc(st.Tasks, func(t TaskState) bool { return t.Type == v1alpha1.TaskNamespace && !t.Phase.Terminal() }):
		return e.createNamespace
	case !st.DryRunDone:
		return e.dryRun
	case st.Failure != "":
		return e.failing
	}
	step := e.currentStep(st)
	switch {
	case step == nil:
		return func(ctx context.Context, st *State) error {
			return e.finish(ctx, st, v1alpha1.OperationSucceeded, "successfully synced (all tasks run)")
		}
	case slices.ContainsFunc(step, func(i int) bool { return !started(st.Tasks[i].Phase) }):
		return func(ctx context.Context, st *State) error { return e.runStep(ctx, st, step) }
	case e.isFinal(st, step) && !slices.ContainsFunc(step, func(i int) bool { return st.Tasks[i].Type == v1alpha1.TaskHook }):
		return func(_ context.Context, st *State) error { e.settle(st, step); return nil }
	}
	return func(ctx context.Context, st *State) error { return e.waitStep(ctx, st, step) }
}

// started reports whether a task has been run (or left out).
func started(p v1alpha1.TaskPhase) bool {
	return p != v1alpha1.TaskPending && p != v1alpha1.TaskDryRunOK
}

// start initializes st for a new sync from the plan.
func (e *Executor) start(ctx context.Context, st *State) {
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	*st = State{ID: hex.EncodeToString(id), Phase: v1alpha1.OperationRunning, StartedAt: time.Now().UTC().Truncate(time.Second)}
	for _, t := range e.plan.Tasks {
		ref := t.Ref()
		ts := TaskState{
			ID: t.ID, Type: t.Type, SyncPhase: t.SyncPhase, Wave: t.Wave, Phase: v1alpha1.TaskPending,
			Group: ref.GVK.Group, Version: ref.GVK.Version, Kind: ref.GVK.Kind, Namespace: ref.Namespace, Name: ref.Name,
		}
		if ts.Name == "" && t.Object != nil {
			ts.Name = hookName(t.Object.GetGenerateName(), e.opts.Revision, st.ID, t.SyncPhase, st.StartedAt.Unix())
		}
		st.Tasks = append(st.Tasks, ts)
	}
	e.events.add(ctx, Event{Type: EventStart, Message: fmt.Sprintf("sync %s: %d tasks", st.ID, len(st.Tasks))})
}

// resume attaches a saved state to the plan: tasks are matched by ID; a
// task that lost its object is left out (apply) or done (prune).
func (e *Executor) resume(ctx context.Context, st *State) {
	if st.Phase == "" {
		st.Phase = v1alpha1.OperationRunning
	}
	for i := range st.Tasks {
		ts := &st.Tasks[i]
		if _, ok := e.byID[ts.ID]; ok || ts.Phase.Terminal() {
			continue
		}
		switch ts.Type {
		case v1alpha1.TaskPrune:
			ts.Phase, ts.Result, ts.Message = v1alpha1.TaskPruned, v1alpha1.ResultCodePruned, "pruned"
		case v1alpha1.TaskNamespace:
			ts.Phase = v1alpha1.TaskSkipped
		default:
			if ts.Phase == v1alpha1.TaskPending || ts.Phase == v1alpha1.TaskDryRunOK {
				ts.Phase, ts.Message = v1alpha1.TaskSkipped, "no longer in the desired state"
			}
		}
	}
	e.events.add(ctx, Event{Type: EventStart, Message: fmt.Sprintf("resume sync %s", st.ID)})
}

// task returns the plan task of st.Tasks[i], nil when the plan lacks it.
func (e *Executor) task(st *State, i int) *Task { return e.byID[st.Tasks[i].ID] }

// currentStep returns the indices of the tasks of the first phase and wave
// (SyncFail left out) that still has unfinished tasks; nil when none has.
func (e *Executor) currentStep(st *State) []int {
	first := slices.IndexFunc(st.Tasks, func(t TaskState) bool {
		return t.SyncPhase != v1alpha1.SyncPhaseSyncFail && t.Type != v1alpha1.TaskNamespace && !t.Phase.Terminal()
	})
	if first < 0 {
		return nil
	}
	phase, wave := st.Tasks[first].SyncPhase, st.Tasks[first].Wave
	var out []int
	for i, t := range st.Tasks {
		if t.SyncPhase == phase && t.Wave == wave && t.Type != v1alpha1.TaskNamespace && !t.Phase.Terminal() {
			out = append(out, i)
		}
	}
	st.SyncPhase, st.Wave = phase, wave
	return out
}

// isFinal reports whether step is the last one with work left.
func (e *Executor) isFinal(st *State, step []int) bool {
	inStep := make([]bool, len(st.Tasks))
	for _, i := range step {
		inStep[i] = true
	}
	for i, t := range st.Tasks {
		if !inStep[i] && t.SyncPhase != v1alpha1.SyncPhaseSyncFail && t.Type != v1alpha1.TaskNamespace && !t.Phase.Terminal() {
			return false
		}
	}
	return true
}

// settle ends the last step without waiting for health: like Argo CD, a
// sync whose last wave has no hook succeeds once that wave is applied.
func (e *Executor) settle(st *State, step []int) {
	for _, i := range step {
		ts := &st.Tasks[i]
		switch {
		case ts.Type == v1alpha1.TaskPrune && ts.Phase == v1alpha1.TaskRunning:
			ts.Phase = v1alpha1.TaskPruned
		case ts.Phase == v1alpha1.TaskApplied:
			ts.Phase = v1alpha1.TaskSucceeded
		}
	}
}

// runStep runs the tasks of one phase and wave: prunes first, then the
// deletion of hooks of earlier syncs, then the writes, kind by kind.
func (e *Executor) runStep(ctx context.Context, st *State, step []int) error {
	e.events.add(ctx, Event{Type: EventStep, SyncPhase: st.SyncPhase, Wave: st.Wave})
	if !e.dryRunStep(ctx, st, step) {
		e.fail(ctx, st, failureMessage("one or more objects failed to apply (dry run)", st, failedTasks(st, step)))
		return nil
	}
	var prunes, hooks []int
	for _, i := range step {
		switch {
		case started(st.Tasks[i].Phase):
		case st.Tasks[i].Type == v1alpha1.TaskPrune:
			prunes = append(prunes, i)
		case st.Tasks[i].Type == v1alpha1.TaskHook:
			hooks = append(hooks, i)
		}
	}
	if err := e.prune(ctx, st, prunes); err != nil {
		return err
	}
	if err := e.deleteBeforeCreation(ctx, st, hooks); err != nil {
		return err
	}
	var writes []int
	for _, i := range step {
		if !started(st.Tasks[i].Phase) && st.Tasks[i].Type != v1alpha1.TaskPrune {
			writes = append(writes, i)
		}
	}
	e.checkpoint(st, hooks)
	e.applyKinds(ctx, st, writes)
	if failed := failedTasks(st, step); len(failed) > 0 {
		e.fail(ctx, st, failureMessage("one or more objects failed to apply", st, failed))
	}
	return nil
}

// failing runs the SyncFail phase of a failed sync: it lets running hooks
// finish, runs the SyncFail hooks, waits for them, and ends the sync.
func (e *Executor) failing(ctx context.Context, st *State) error {
	var running, pending, syncFail []int
	for i, t := range st.Tasks {
		switch {
		case t.SyncPhase != v1alpha1.SyncPhaseSyncFail && t.Type == v1alpha1.TaskHook && t.Phase == v1alpha1.TaskRunning:
			running = append(running, i)
		case t.SyncPhase == v1alpha1.SyncPhaseSyncFail && !started(t.Phase):
			pending = append(pending, i)
		case t.SyncPhase == v1alpha1.SyncPhaseSyncFail && t.Phase == v1alpha1.TaskRunning:
			syncFail = append(syncFail, i)
		}
	}
	switch {
	case len(running) > 0:
		_, err := e.wait(ctx, st, running, true, nil)
		return err
	case len(pending) > 0:
		e.checkpoint(st, pending)
		e.applyKinds(ctx, st, pending)
		return nil
	case len(syncFail) > 0:
		_, err := e.wait(ctx, st, syncFail, true, nil)
		return err
	}
	message := st.Failure
	var hookFailures []int
	for i, t := range st.Tasks {
		if t.SyncPhase == v1alpha1.SyncPhaseSyncFail && t.Phase == v1alpha1.TaskFailed {
			hookFailures = append(hookFailures, i)
		}
	}
	if len(hookFailures) > 0 {
		message += "\n" + failureMessage("one or more SyncFail hooks failed", st, hookFailures)
	}
	return e.finish(ctx, st, v1alpha1.OperationFailed, message)
}

// fail marks the sync failed; SyncFail hooks run next.
func (e *Executor) fail(ctx context.Context, st *State, message string) {
	st.Failure = message
	st.Message = message
	e.events.add(ctx, Event{Type: EventSyncFail, SyncPhase: st.SyncPhase, Wave: st.Wave, Message: message})
}

// finish deletes hooks as their delete policies say and ends the sync.
func (e *Executor) finish(ctx context.Context, st *State, phase v1alpha1.OperationPhase, message string) error {
	e.deleteFinishedHooks(ctx, st)
	now := time.Now().UTC()
	st.Phase, st.Message, st.FinishedAt = phase, message, &now
	typ := EventSucceeded
	if phase == v1alpha1.OperationFailed {
		typ = EventFailed
	}
	e.events.add(ctx, Event{Type: typ, Message: message})
	return nil
}

func failedTasks(st *State, idx []int) []int {
	var out []int
	for _, i := range idx {
		if st.Tasks[i].Phase == v1alpha1.TaskFailed {
			out = append(out, i)
		}
	}
	return out
}

// failureMessage is Argo CD's failure message with the tasks' reasons.
func failureMessage(message string, st *State, failed []int) string {
	var reasons []string
	for _, i := range failed {
		if m := st.Tasks[i].Message; m != "" {
			reasons = append(reasons, m)
		}
	}
	if len(reasons) == 0 {
		return message
	}
	return message + ", reason: " + strings.Join(reasons, ",")
}

// checkpoint hands st to Options.Checkpoint before the first hook named
// from a generateName is created: the name holds the sync's start time, so
// a controller that restarts after creating the hook but before saving the
// sync would start a new sync, name the hook anew and run it twice.
func (e *Executor) checkpoint(st *State, hooks []int) {
	if e.checkpointed || e.opts.Checkpoint == nil {
		return
	}
	if !slices.ContainsFunc(hooks, func(i int) bool {
		t := e.task(st, i)
		return t != nil && t.Object != nil && t.Object.GetName() == ""
	}) {
		return
	}
	e.opts.Checkpoint(*st.DeepCopy())
	e.checkpointed = true
}

// progress records when tasks started and ended, and hands a copy of st
// to OnProgress.
func (e *Executor) progress(st *State) {
	st.stamp(time.Now())
	if e.opts.OnProgress != nil {
		e.opts.OnProgress(*st.DeepCopy())
	}
}
