package sync

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWaveWaitsUntilPreviousIsHealthy(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, exec := run.run(ctx, fixture(t, "sync/gated.yaml", ns))
	if st.Phase != OperationSucceeded {
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

func TestDegradedWaveFailsAndRunsSyncFailHooks(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, _ := run.run(ctx, fixture(t, "sync/degraded.yaml", ns))
	if st.Phase != OperationFailed || !strings.Contains(st.Message, "one or more synchronization tasks completed unsuccessfully") {
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
	if r := results["Job/fails"]; r.HookPhase != OperationFailed {
		t.Errorf("Job result = %+v, want Failed", r)
	}
	if r := results["ConfigMap/on-fail"]; r.HookType != "SyncFail" || r.HookPhase != OperationSucceeded {
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
	if st.Phase != OperationRunning {
		t.Errorf("state phase = %s, want Running (resumable)", st.Phase)
	}
}
