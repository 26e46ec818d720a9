package sync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestWaveWaitsUntilPreviousIsHealthy(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, exec := run.run(ctx, fixture(t, "sync/gated.yaml", ns))
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync %s: %s", st.Phase, st.Message)
	}
	events := exec.Events()
	healthy, ok := firstEvent(events, func(e Event) bool { return e.Type == EventWaveHealthy && e.Wave == 0 })
	if !ok {
		t.Fatal("no WaveHealthy event for wave 0")
	}
	apply, ok := firstEvent(events, func(e Event) bool { return e.Type == EventApply && e.Wave == 1 })
	if !ok {
		t.Fatal("ConfigMap of wave 1 was never applied")
	}
	if apply.Time.Before(healthy.Time) {
		t.Errorf("wave 1 applied at %v, before wave 0 became healthy at %v", apply.Time, healthy.Time)
	}
	checkTaskTimes(t, st, healthy.Time)
	waiting, ok := firstEvent(events, func(e Event) bool { return e.Type == EventWaiting })
	if !ok || !strings.Contains(waiting.Message, "Deployment "+ns+"/web: 0/1 ready") {
		t.Errorf("waiting message = %q, want it to name the Deployment and its ready count", waiting.Message)
	}

	// On the server: the ConfigMap was created once the Deployment was available.
	deploy, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var available metav1.Time
	for _, c := range deploy.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == "True" {
			available = c.LastTransitionTime
		}
	}
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "after", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if available.IsZero() || cm.CreationTimestamp.Before(&available) {
		t.Errorf("ConfigMap created at %v, Deployment available at %v", cm.CreationTimestamp, available)
	}
}

// checkTaskTimes checks the times the state records for the timeline:
// every task that ran started and ended, in wave order, wave 0's end being
// the moment it turned healthy, and the results carry them.
func checkTaskTimes(t *testing.T, st *State, wave0Healthy time.Time) {
	t.Helper()
	var wave0End, wave1Start time.Time
	for _, task := range st.Tasks {
		if task.Phase == v1alpha1.TaskSkipped {
			continue
		}
		if task.StartedAt.IsZero() || task.FinishedAt.IsZero() || task.FinishedAt.Before(task.StartedAt) {
			t.Errorf("task %s %s/%s: started %v, finished %v", task.ID, task.Kind, task.Name, task.StartedAt, task.FinishedAt)
		}
		switch {
		case task.Type == v1alpha1.TaskApply && task.Wave == 0 && task.FinishedAt.After(wave0End):
			wave0End = task.FinishedAt
		case task.Type == v1alpha1.TaskApply && task.Wave == 1 && (wave1Start.IsZero() || task.StartedAt.Before(wave1Start)):
			wave1Start = task.StartedAt
		}
	}
	if wave1Start.Before(wave0End) {
		t.Errorf("wave 1 started at %v, before wave 0 ended at %v", wave1Start, wave0End)
	}
	if d := wave0End.Sub(wave0Healthy); d < -100*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("wave 0 ended at %v, %v from the event that made it healthy (%v)", wave0End, d, wave0Healthy)
	}
	for _, r := range st.Result().Resources {
		if r.StartedAt.IsZero() || r.FinishedAt.IsZero() {
			t.Errorf("result %s/%s has no times: %+v", r.Kind, r.Name, r)
		}
	}
}

func TestDegradedWaveFailsAndRunsSyncFailHooks(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, _ := run.run(ctx, fixture(t, "sync/degraded.yaml", ns))
	if st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, "one or more synchronization tasks completed unsuccessfully") {
		t.Fatalf("sync %s: %q, want Failed with unsuccessful tasks", st.Phase, st.Message)
	}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "never", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap of the wave after the degraded one: err = %v, want NotFound", err)
	}
	hook, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "on-fail", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("SyncFail hook: %v", err)
	}
	if len(hook.Finalizers) != 0 {
		t.Errorf("SyncFail hook finalizers = %v, want none once its result was read", hook.Finalizers)
	}
	results := map[string]ResourceResult{}
	for _, r := range st.Result().Resources {
		results[r.Kind+"/"+r.Name] = r
	}
	if r := results["Job/fails"]; r.HookPhase != v1alpha1.OperationFailed {
		t.Errorf("Job result = %+v, want Failed", r)
	}
	if r := results["ConfigMap/on-fail"]; r.HookType != "SyncFail" || r.HookPhase != v1alpha1.OperationSucceeded {
		t.Errorf("SyncFail hook result = %+v, want a succeeded SyncFail hook", r)
	}
}

func TestWaitExplainsUnschedulablePods(t *testing.T) {
	_, ns, ctx, run := setup(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var message string
	run.opts.OnProgress = func(st State) {
		if strings.Contains(st.Message, "nodes are available") {
			message = st.Message
			cancel()
		}
	}
	st, _, err := run.runUntil(ctx, fixture(t, "sync/unschedulable.yaml", ns))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() = %v, want it cancelled while waiting", err)
	}
	want := "waiting for Deployment " + ns + "/stuck: 0/1 ready; pod stuck-"
	if !strings.HasPrefix(message, want) || !strings.Contains(message, " Pending: 0/2 nodes are available: ") {
		t.Errorf("wait message = %q, want %q... Pending: 0/2 nodes are available: ...", message, want)
	}
	if st.Phase != v1alpha1.OperationRunning {
		t.Errorf("state phase = %s, want Running (resumable)", st.Phase)
	}
}
