package sync

import (
	"errors"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// stopOn returns a Stop channel closed at the first event matching.
func stopOn(run *syncRun, match func(Event) bool) {
	stop := make(chan struct{})
	var once stdsync.Once
	run.opts.Stop = stop
	run.opts.OnEvent = func(e Event) {
		if match(e) {
			once.Do(func() { close(stop) })
		}
	}
}

// TestStopWhileWaitingOnAWave: a sync asked to stop while it waits on a
// wave that cannot become healthy stops at once; the next wave is never
// written and the state says where it stopped.
func TestStopWhileWaitingOnAWave(t *testing.T) {
	env, ns, ctx, run := setup(t)
	stopOn(run, func(e Event) bool { return e.Type == EventWaiting })
	st, _, err := run.runUntil(ctx, fixture(t, "sync/unschedulable.yaml", ns))
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Run = %v, want ErrStopped; state %s: %s", err, st.Phase, st.Message)
	}
	want := "stopped: superseded by a new revision while in Sync wave 0, waiting for Deployment " + ns + "/stuck"
	if st.Phase != v1alpha1.OperationFailed || !strings.HasPrefix(st.Message, want) {
		t.Errorf("state %s: %q, want Failed: %q...", st.Phase, st.Message, want)
	}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("wave 1's ConfigMap after the stop: %v, want not found", err)
	}
}

// TestStopWaitsForARunningHook: a stop asked while a hook runs waits for
// its result, so the hook is recorded and released once, then stops.
func TestStopWaitsForARunningHook(t *testing.T) {
	env, ns, ctx, run := setup(t)
	stopOn(run, func(e Event) bool { return e.Type == EventApplied && strings.Contains(e.Task, "Job") })
	st, _, err := run.runUntil(ctx, fixture(t, "sync/stuck-with-hook.yaml", ns))
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Run = %v, want ErrStopped; state %s: %s", err, st.Phase, st.Message)
	}
	var hook *TaskState
	for i := range st.Tasks {
		if st.Tasks[i].Type == v1alpha1.TaskHook {
			hook = &st.Tasks[i]
		}
	}
	if hook == nil || hook.Phase != v1alpha1.TaskSucceeded {
		t.Fatalf("the hook's task: %+v; want it succeeded before the stop", hook)
	}
	jobs, err := env.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d jobs after the stop, want the one hook", len(jobs.Items))
	}
	if f := jobs.Items[0].Finalizers; len(f) != 0 {
		t.Errorf("the hook keeps finalizers %v after the stop; want it released", f)
	}
}

// TestDeadlineFailsWithTheWaitExplanation: a sync that reaches its
// deadline while a wave cannot become healthy ends Failed, saying why it
// ended and what it waited for.
func TestDeadlineFailsWithTheWaitExplanation(t *testing.T) {
	_, ns, ctx, run := setup(t)
	run.opts.Deadline = time.Now().Add(2 * time.Second)
	run.opts.DeadlineReason = "sync timeout 2s reached"
	st, _ := run.run(ctx, fixture(t, "sync/unschedulable.yaml", ns))
	want := "sync timeout 2s reached while in Sync wave 0, waiting for Deployment " + ns + "/stuck: 0/1 ready; pod stuck-"
	if st.Phase != v1alpha1.OperationFailed || !strings.HasPrefix(st.Message, want) || !strings.Contains(st.Message, "didn't match Pod's node affinity/selector") {
		t.Errorf("state %s: %q, want Failed: %q... and the scheduler's reason", st.Phase, st.Message, want)
	}
	if late := time.Since(run.opts.Deadline); late > 5*time.Second {
		t.Errorf("the sync ended %v after its deadline", late)
	}
}
