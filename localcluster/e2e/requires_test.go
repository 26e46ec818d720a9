package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// testRequiredService: a pod requiring redis.cache:6379 crash-loops with a
// growing back-off while the Service has no ready endpoint, then runs and
// stays Ready once a ready pod backs the Service.
func testRequiredService(t *testing.T, c *localCluster) {
	ctx := t.Context()
	pods := c.client.CoreV1().Pods("default")
	if _, err := c.client.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	app := simplePod("needs-redis", map[string]string{
		"localcluster.wavecd.io/requires": "redis.cache:6379",
		"localcluster.wavecd.io/backoff":  "1s",
	}, corev1.RestartPolicyAlways)
	created, err := pods.Create(ctx, app, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var crashed *corev1.Pod
	eventually(t, 30*time.Second, "needs-redis in CrashLoopBackOff after its second crash", func() (bool, error) {
		p, err := pods.Get(ctx, "needs-redis", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		cs := p.Status.ContainerStatuses[0]
		crashed = p
		return cs.RestartCount >= 2 && cs.State.Waiting != nil, nil
	})
	assertCrashLoop(t, crashed, created.UID)

	createRedis(t, c)
	eventually(t, 30*time.Second, "needs-redis Ready once redis.cache has a ready endpoint", func() (bool, error) {
		p, err := pods.Get(ctx, "needs-redis", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ok, _ := podReady(p)
		return ok, nil
	})
	ready, err := pods.Get(ctx, "needs-redis", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // longer than a crash and the next back-off
	later, err := pods.Get(ctx, "needs-redis", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := later.Status.ContainerStatuses[0]
	if ok, _ := podReady(later); !ok || later.Status.Phase != corev1.PodRunning || cs.State.Running == nil ||
		cs.RestartCount != ready.Status.ContainerStatuses[0].RestartCount {
		t.Fatalf("needs-redis did not stay Running and Ready: phase %s, state %+v, restarts %d (were %d)",
			later.Status.Phase, cs.State, cs.RestartCount, ready.Status.ContainerStatuses[0].RestartCount)
	}
}

func assertCrashLoop(t *testing.T, p *corev1.Pod, uid types.UID) {
	t.Helper()
	cs := p.Status.ContainerStatuses[0]
	wantMsg := fmt.Sprintf("back-off 2s restarting failed container=main pod=needs-redis_default(%s)", uid)
	if cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.State.Waiting.Message != wantMsg {
		t.Errorf("waiting state %+v, want CrashLoopBackOff with message %q", cs.State.Waiting, wantMsg)
	}
	term := cs.LastTerminationState.Terminated
	if term == nil || term.Reason != "Error" || term.ExitCode != 1 || !strings.Contains(term.Message, "needs Service cache/redis:6379 (from annotation localcluster.wavecd.io/requires), not created yet") {
		t.Errorf("last termination %+v, want Error, exit code 1, naming cache/redis:6379", term)
	}
	if cs.Ready || p.Status.Phase != corev1.PodRunning {
		t.Errorf("crash-looping pod: phase %s, container ready %v; want Running, not ready", p.Status.Phase, cs.Ready)
	}
	for _, cond := range p.Status.Conditions {
		if (cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady) && cond.Status != corev1.ConditionFalse {
			t.Errorf("condition %s = %s while crash-looping, want False", cond.Type, cond.Status)
		}
	}
}

// createRedis creates the Service redis.cache:6379 and a pod backing it.
func createRedis(t *testing.T, c *localCluster) {
	t.Helper()
	ctx := t.Context()
	labels := map[string]string{"app": "redis"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: "cache"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "redis", Port: 6379, TargetPort: intstr.FromInt32(6379)},
		}},
	}
	if _, err := c.client.CoreV1().Services("cache").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	redis := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: "cache", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "redis", Image: "redis",
			Ports: []corev1.ContainerPort{{Name: "redis", ContainerPort: 6379}}}}},
	}
	if _, err := c.client.CoreV1().Pods("cache").Create(ctx, redis, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
