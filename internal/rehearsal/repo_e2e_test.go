package rehearsal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// redisPair is a repository shaped like the public one the health-check
// demo comes from, as committed: an app of apps (apps/, a Helm chart whose
// templates are two Applications), app-a a Redis whose readiness probe
// waits 180 s, app-b a client whose command pings it. No wavecd annotation,
// no simulation annotation.
const redisPair = "testdata/redis-pair"

// crashMessage is what the timeline says of app-b's crash.
const crashMessage = "crashed: needs Service default/app-a-redis:6379 (named in its args), no ready endpoint"

// TestUpRehearsesARepositoryAsItIs rehearses redisPair at time scale 0.1
// three ways: without app health app-b crash-loops until Redis is Ready;
// with Argo CD's Lua check from an argo-cd Helm chart values file, and with
// wavecd's default, app-b is created once app-a is Healthy and never
// restarts.
func TestUpRehearsesARepositoryAsItIs(t *testing.T) {
	e := newRehearsalEnv(t)
	repo, err := filepath.Abs(redisPair)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, settings string
		crashes        bool
	}{
		{name: "app health off", settings: "app-health-off.yaml", crashes: true},
		{name: "Argo CD's Lua from an argo-cd values file", settings: "argocd-values.yaml"},
		{name: "wavecd's default"},
	} {
		out := &testenv.SyncBuffer{}
		u := e.up("", out)
		u.Repo, u.Fresh, u.TimeScale = repo, true, 0.1
		if tc.settings != "" {
			u.Settings = filepath.Join(repo, tc.settings)
		}
		took := e.run(tc.name, u, out)
		if took > time.Minute {
			t.Errorf("%s: took %s, want under a minute at time scale 0.1", tc.name, took.Round(time.Second))
		}
		p := e.pairOutcome()
		text := out.String()
		// Redis's probe waits 180 s, 18 s at scale 0.1; transition times
		// have second precision.
		if d := p.redisReady.Sub(p.redisCreated); d < 17*time.Second {
			t.Errorf("%s: Redis Ready %s after its pod's creation, before its probe's delay", tc.name, d)
		}
		if !strings.Contains(text, " | ") {
			t.Errorf("%s: the timeline does not show the time at full scale", tc.name)
		}
		if tc.crashes {
			if p.clientRestarts < 1 || p.clientReady.Before(p.redisReady) || !strings.Contains(text, crashMessage) {
				t.Errorf("%s: app-b restarted %d times, Ready at %s (Redis at %s); want crashes %q and Ready after Redis",
					tc.name, p.clientRestarts, p.clientReady, p.redisReady, crashMessage)
			}
			continue
		}
		if p.clientRestarts != 0 || strings.Contains(text, "crashed") || p.appBCreated.Before(p.appAHealthy) {
			t.Errorf("%s: app-b restarted %d times, created at %s, app-a Healthy at %s; want no restart and app-b after app-a",
				tc.name, p.clientRestarts, p.appBCreated, p.appAHealthy)
		}
		if tc.settings == "argocd-values.yaml" && !strings.Contains(text, "settings: warning: ") {
			t.Errorf("%s: the values file's workload keys were left out without a warning", tc.name)
		}
	}
}

// pairOutcome is what the cluster says about one run of redisPair.
type pairOutcome struct {
	redisCreated, redisReady time.Time
	clientReady              time.Time
	clientRestarts           int32
	appAHealthy, appBCreated time.Time
}

func (e *rehearsalEnv) pairOutcome() pairOutcome {
	e.t.Helper()
	c := e.client()
	ctx := e.t.Context()
	var p pairOutcome
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("default")); err != nil {
		e.t.Fatal(err)
	}
	for _, pod := range pods.Items {
		ready := readySince(&pod)
		switch pod.Labels["app"] {
		case "app-a-redis":
			p.redisCreated, p.redisReady = pod.CreationTimestamp.Time, ready
		case "app-b":
			p.clientReady = ready
			for _, cs := range pod.Status.ContainerStatuses {
				p.clientRestarts += cs.RestartCount
			}
		}
	}
	apps := &v1alpha1.ApplicationList{}
	if err := c.List(ctx, apps, client.InNamespace(Namespace)); err != nil {
		e.t.Fatal(err)
	}
	for _, a := range apps.Items {
		switch a.Name {
		case "app-a":
			if a.Status.Health.LastTransitionTime != nil {
				p.appAHealthy = a.Status.Health.LastTransitionTime.Time
			}
		case "app-b":
			p.appBCreated = a.CreationTimestamp.Time
		}
	}
	if p.redisReady.IsZero() || p.clientReady.IsZero() || p.appAHealthy.IsZero() || p.appBCreated.IsZero() {
		e.t.Fatalf("redis-pair did not come up: %+v", p)
	}
	return p
}

// readySince is when the pod's Ready condition last turned True, or zero.
func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
