package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// specProfile is the profile of TestPodsFollowTheirSpecs: what the specs
// cannot say.
const specProfile = `nodeGroups:
- name: general
  count: 2
workloads:
- {namespace: profiled, name: slow, readyAfter: 40s}
- {namespace: profiled, selector: job-name=migrate, runTime: 10s, exitCode: 3}
ingressController:
  addresses: [203.0.113.10]
  ingressClasses: [nginx]
`

// TestPodsFollowTheirSpecs runs a cluster at time scale 0.1 in which pods
// behave as their specs say: readiness from their probes, crash loops
// while a Service their command names is not ready, webhooks and
// APIServices answered only while their pods are Ready, and what the
// profile adds.
func TestPodsFollowTheirSpecs(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(profile, []byte(specProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", profile, "--time-scale", "0.1")
	t.Run("readiness probe and a client that needs the Service", func(t *testing.T) { testProbeAndClient(t, c) })
	t.Run("a webhook follows its backing pod", func(t *testing.T) { testWebhook(t, c) })
	t.Run("an APIService follows its backing pod", func(t *testing.T) { testAPIService(t, c) })
	t.Run("profile overrides and ingress controller", func(t *testing.T) { testProfile(t, c) })
}

// redisAndClient is a Redis whose readiness probe waits 30 s and a client
// whose command pings it, as people write them.
const redisAndClient = `apiVersion: v1
kind: Service
metadata: {name: app-a-redis}
spec:
  selector: {app: redis}
  ports: [{name: redis, port: 6379, targetPort: 6379}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-a-redis}
spec:
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis}}
    spec:
      containers:
      - name: redis
        image: redis:7.4
        ports: [{containerPort: 6379}]
        readinessProbe: {exec: {command: [redis-cli, ping]}, initialDelaySeconds: 30}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-b}
spec:
  selector: {matchLabels: {app: app-b}}
  template:
    metadata: {labels: {app: app-b}}
    spec:
      containers:
      - name: app-b
        image: redis:7.4
        command: [sh, -c]
        args: ["redis-cli -h app-a-redis -p 6379 ping && sleep 3600"]
`

func testProbeAndClient(t *testing.T, c *localCluster) {
	created := time.Now()
	c.mustCreate(t, redisAndClient)
	var redis, client *corev1.Pod
	eventually(t, 60*time.Second, "app-a-redis and app-b Ready", func() (bool, error) {
		var err error
		if redis, err = onlyPod(t, c, "default", "app=redis"); err != nil {
			return false, err
		}
		if client, err = onlyPod(t, c, "default", "app=app-b"); err != nil || redis == nil || client == nil {
			return false, err
		}
		r, _ := podReady(redis)
		b, _ := podReady(client)
		return r && b, nil
	})
	_, redisReady := podReady(redis)
	_, clientReady := podReady(client)
	// 30 s of initial delay at scale 0.1: the probe tick after 3 s, 4 s
	// after the admission. Transition times have second precision.
	if d := redisReady.Sub(created); d < 3*time.Second {
		t.Errorf("Redis Ready %s after its creation, before its probe's 3 s delay", d)
	}
	if clientReady.Before(redisReady) {
		t.Errorf("app-b Ready at %s, before Redis at %s", clientReady, redisReady)
	}
	cs := client.Status.ContainerStatuses[0]
	term := cs.LastTerminationState.Terminated
	const want = "needs Service default/app-a-redis:6379 (named in its args), no ready endpoint"
	if cs.RestartCount < 1 || term == nil || term.ExitCode != 1 || term.Message != want {
		t.Errorf("app-b: %d restarts, last termination %+v; want at least 1, exit 1, %q", cs.RestartCount, term, want)
	}
	if rs := redis.Status.ContainerStatuses[0]; rs.RestartCount != 0 {
		t.Errorf("Redis restarted %d times", rs.RestartCount)
	}
}

// onlyPod returns the one pod matching selector.
func onlyPod(t *testing.T, c *localCluster, ns, selector string) (*corev1.Pod, error) {
	t.Helper()
	list, err := c.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(list.Items) != 1 {
		return nil, err
	}
	return &list.Items[0], nil
}

const profiled = `apiVersion: v1
kind: Namespace
metadata: {name: profiled}
---
apiVersion: v1
kind: Pod
metadata: {name: slow, namespace: profiled}
spec:
  containers: [{name: app, image: app}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: profiled}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: profiled}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: profiled}
spec:
  ingressClassName: nginx
  defaultBackend: {service: {name: web, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: internal, namespace: profiled}
spec:
  ingressClassName: traefik
  defaultBackend: {service: {name: web, port: {number: 80}}}
`

func testProfile(t *testing.T, c *localCluster) {
	ctx := t.Context()
	created := time.Now()
	c.mustCreate(t, profiled)
	pods := c.client.CoreV1().Pods("profiled")
	eventually(t, 30*time.Second, "pod slow Ready", func() (bool, error) {
		p, err := pods.Get(ctx, "slow", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// Transition times have second precision: 3 s after the creation
		// proves more than 3 s, 4 s are due.
		ok, at := podReady(p)
		if ok && at.Sub(created) < 3*time.Second {
			t.Errorf("pod slow Ready %s after its creation; the profile says 40 s, 4 s at scale 0.1", at.Sub(created))
		}
		return ok, nil
	})
	eventually(t, 30*time.Second, "the migrate Job's pod Failed with exit code 3", func() (bool, error) {
		p, err := onlyPod(t, c, "profiled", "job-name=migrate")
		if err != nil || p == nil || p.Status.Phase != corev1.PodFailed {
			return false, err
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		return term != nil && term.ExitCode == 3, nil
	})
	eventually(t, 30*time.Second, "the LoadBalancer Service and the nginx Ingress have an address", func() (bool, error) {
		svc, err := c.client.CoreV1().Services("profiled").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ing, err := c.client.NetworkingV1().Ingresses("profiled").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		lb, il := svc.Status.LoadBalancer.Ingress, ing.Status.LoadBalancer.Ingress
		return len(lb) == 1 && lb[0].IP == "203.0.113.10" && len(il) == 1 && il[0].IP == "203.0.113.10", nil
	})
	other, err := c.client.NetworkingV1().Ingresses("profiled").Get(ctx, "internal", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("an Ingress of another class got an address: %v", other.Status.LoadBalancer.Ingress)
	}
}

// hasAll reports whether s holds every part.
func hasAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
