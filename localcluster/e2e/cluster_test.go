package e2e

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestLocalCluster runs the scenarios of one cluster "a" and a second
// cluster "b" side by side; subtests share them to keep starts few.
func TestLocalCluster(t *testing.T) {
	a := startCluster(t, t.TempDir(), 2)
	t.Run("nodes are Ready", func(t *testing.T) { assertNodesReady(t, a, 2) })
	t.Run("reports its Kubernetes release", func(t *testing.T) { testServerVersion(t, a) })
	t.Run("deployment of 2 replicas becomes Available", func(t *testing.T) { testDeploymentAvailable(t, a) })
	t.Run("pod readiness delay annotation", func(t *testing.T) { testReadinessDelay(t, a) })
	t.Run("job pods complete and annotated pods fail", func(t *testing.T) { testRunToCompletion(t, a) })
	t.Run("pod crash-loops until its required service is ready", func(t *testing.T) { testRequiredService(t, a) })

	b := startCluster(t, t.TempDir(), 1)
	t.Run("two clusters are isolated", func(t *testing.T) { testIsolation(t, a, b) })
	t.Run("stop frees everything and restart keeps data", func(t *testing.T) { testStopRestart(t, b) })
	t.Run("killed supervisor leaves no process", func(t *testing.T) { testKilledSupervisor(t, b) })
}

// testServerVersion: /version is the k8s.io/kubernetes release the
// binary was built from, as a release build reports it, not the
// placeholder of an unstamped build.
func testServerVersion(t *testing.T, c *localCluster) {
	v, err := c.client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	want := kubernetesVersion(t)
	minor := strings.Split(want, ".")[1]
	if v.GitVersion != want || v.Major != "1" || v.Minor != minor {
		t.Errorf("/version = %s (major %q, minor %q), want %s (1, %s)", v.GitVersion, v.Major, v.Minor, want, minor)
	}
}

// kubernetesVersion is the version of k8s.io/kubernetes the module requires.
func kubernetesVersion(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("go list k8s.io/kubernetes: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func assertNodesReady(t *testing.T, c *localCluster, want int) {
	nodes, err := c.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready != want || len(nodes.Items) != want {
		t.Fatalf("ready nodes = %d of %d, want %d of %d", ready, len(nodes.Items), want, want)
	}
}

func testDeploymentAvailable(t *testing.T, c *localCluster) {
	ctx := t.Context()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if _, err := c.client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "deployment web Available with 2 ready replicas", func() (bool, error) {
		got, err := c.client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				return got.Status.ReadyReplicas == 2 && got.Status.AvailableReplicas == 2, nil
			}
		}
		return false, nil
	})
}

func simplePod(name string, annotations map[string]string, restart corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
}

func podReady(p *corev1.Pod) (bool, time.Time) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

func testReadinessDelay(t *testing.T, c *localCluster) {
	ctx := t.Context()
	const delay = 4 * time.Second
	slow := simplePod("slow", map[string]string{"pod-ready.stage.kwok.x-k8s.io/delay": delay.String()}, corev1.RestartPolicyAlways)
	fast := simplePod("fast", nil, corev1.RestartPolicyAlways)
	created := time.Now()
	for _, p := range []*corev1.Pod{slow, fast} {
		if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readyAt := map[string]time.Duration{}
	eventually(t, 60*time.Second, "pods slow and fast Ready", func() (bool, error) {
		for _, name := range []string{"slow", "fast"} {
			if _, seen := readyAt[name]; seen {
				continue
			}
			p, err := c.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if ok, _ := podReady(p); ok {
				readyAt[name] = time.Since(created)
			}
		}
		return len(readyAt) == 2, nil
	})
	if readyAt["slow"] < delay {
		t.Errorf("pod with a %s readiness delay was Ready after %s", delay, readyAt["slow"])
	}
	if readyAt["fast"] >= delay {
		t.Errorf("pod without a delay took %s to be Ready, want under %s", readyAt["fast"], delay)
	}
}

func testRunToCompletion(t *testing.T, c *localCluster) {
	ctx := t.Context()
	pods := map[string]corev1.PodPhase{"completes": corev1.PodSucceeded, "exits-1": corev1.PodFailed}
	ok := simplePod("completes", nil, corev1.RestartPolicyNever)
	bad := simplePod("exits-1", map[string]string{"localcluster.wavecd.io/exit-code": "1"}, corev1.RestartPolicyNever)
	for _, p := range []*corev1.Pod{ok, bad} {
		if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, phase := range pods {
		eventually(t, 60*time.Second, "pod "+name+" "+string(phase), func() (bool, error) {
			p, err := c.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == phase, err
		})
	}
}

func testIsolation(t *testing.T, a, b *localCluster) {
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a", Namespace: "default"}}
	if _, err := a.client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CoreV1().ConfigMaps("default").Get(ctx, "only-in-a", metav1.GetOptions{}); err == nil {
		t.Fatal("cluster b sees a ConfigMap created in cluster a")
	}
	nodes, err := b.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("cluster b has %d nodes, want its own 1", len(nodes.Items))
	}
	sa, sb := readState(t, a.dir), readState(t, b.dir)
	for name, port := range sa.Ports {
		for _, other := range sb.Ports {
			if port == other {
				t.Errorf("both clusters use port %d (%s)", port, name)
			}
		}
	}
}

func testStopRestart(t *testing.T, c *localCluster) {
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := c.client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := readState(t, c.dir)
	cli(t, "stop", "--dir", c.dir)
	if pids := processesOf(t, c.dir); len(pids) > 0 {
		t.Fatalf("processes still running after stop: %v", pids)
	}
	for name, port := range before.Ports {
		if portListening(port) {
			t.Errorf("port %d (%s) still accepts connections after stop", port, name)
		}
	}
	cli(t, "start", "--dir", c.dir, "--nodes", "1", "--detach")
	c.client = clientFor(t, c.dir)
	got, err := c.client.CoreV1().ConfigMaps("default").Get(ctx, "survives", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap created before the restart: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Fatalf("ConfigMap data after restart = %v", got.Data)
	}
}

func testKilledSupervisor(t *testing.T, c *localCluster) {
	st := readState(t, c.dir)
	if len(st.Children) != 5 {
		t.Fatalf("state lists %d children, want 5: %v", len(st.Children), st.Children)
	}
	if err := syscall.Kill(st.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every process of the cluster gone", func() (bool, error) {
		return len(processesOf(t, c.dir)) == 0, nil
	})
	status := cli(t, "status", "--dir", c.dir)
	if want := "stopped"; len(status) < len(want) || status[:len(want)] != want {
		t.Fatalf("status after kill = %q, want it to start with %q", status, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("API server still answers after its supervisor was killed")
	}
}
