package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/testenv"
)

const childApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
  annotations: {argocd.argoproj.io/sync-wave: "WAVE"}
spec:
  project: default
  source: {repoURL: REPO, path: NAME, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy: {automated: {prune: true}}
`

// slowDeployment becomes Available 4 s after its pod is scheduled.
const slowDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: redis}
spec:
  replicas: 1
  selector: {matchLabels: {app: redis}}
  template:
    metadata:
      labels: {app: redis}
      annotations: {pod-ready.stage.kwok.x-k8s.io/delay: "4s"}
    spec:
      containers: [{name: redis, image: redis:7}]
`

const rootApp = `
metadata:
  name: root
spec:
  project: default
  source: {repoURL: REPO, path: apps, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy: {automated: {prune: true}}
`

const appHealthLua = `hs = {status = "Progressing", message = ""}
if obj.status ~= nil and obj.status.health ~= nil then
  hs.status = obj.status.health.status
  if obj.status.health.message ~= nil then hs.message = obj.status.health.message end
end
return hs`

func TestAppOfAppsWaves(t *testing.T) {
	tests := map[string]struct {
		opts     Options
		settings map[string]string
		// gated: app-b is created only after app-a's pod is Ready.
		gated bool
	}{
		"wavecd default gates on child health":       {gated: true},
		"argo parity without the Lua does not gate":  {opts: Options{ArgoParity: true}, gated: false},
		"argo parity with the Application Lua gates": {opts: Options{ArgoParity: true}, settings: map[string]string{"resource.customizations.health.argoproj.io_Application": appHealthLua}, gated: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := startController(t, tc.opts)
			if tc.settings != nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SettingsConfigMap, Namespace: h.ns}, Data: tc.settings}
				if err := h.c.Create(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
			}
			repo := testenv.NewGitRepo(t, map[string]string{"app-a/redis.yaml": slowDeployment, "app-b/config.yaml": guestbookConfigMap})
			repo.Commit(map[string]string{
				"apps/app-a.yaml": child(h, repo, "app-a", "0"), "apps/app-b.yaml": child(h, repo, "app-b", "1"),
			}, "add apps")
			h.apply(strings.ReplaceAll(rootApp, "REPO", repo.Dir))
			h.waitApp("root", 90*time.Second, "root Synced and Healthy", syncedHealthy)
			h.waitApp("app-a", 60*time.Second, "app-a Synced and Healthy", syncedHealthy)
			h.waitApp("app-b", 60*time.Second, "app-b Synced and Healthy", syncedHealthy)
			readyAt := podReadyTime(t, h, "app=redis")
			createdB := h.app("app-b").CreationTimestamp.Time
			if tc.gated && createdB.Before(readyAt) {
				t.Fatalf("app-b created at %s, before app-a's pod was Ready at %s", createdB, readyAt)
			}
			if !tc.gated && !createdB.Before(readyAt.Add(-time.Second)) {
				t.Fatalf("app-b created at %s, want well before app-a's pod was Ready at %s", createdB, readyAt)
			}
		})
	}
}

func child(h *harness, repo *testenv.GitRepo, name, wave string) string {
	s := strings.ReplaceAll(childApp, "NAMESPACE", h.ns)
	s = strings.ReplaceAll(s, "NAME", name)
	s = strings.ReplaceAll(s, "REPO", repo.Dir)
	return strings.ReplaceAll(s, "WAVE", wave)
}

// podReadyTime returns when the first pod matching selector turned Ready.
func podReadyTime(t *testing.T, h *harness, selector string) time.Time {
	t.Helper()
	pods := &corev1.PodList{}
	sel, err := metav1.ParseToLabelSelector(selector)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := metav1.LabelSelectorAsSelector(sel)
	if err := h.c.List(context.Background(), pods, client.InNamespace(h.ns), client.MatchingLabelsSelector{Selector: ls}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return c.LastTransitionTime.Time
			}
		}
	}
	t.Fatalf("no Ready pod matches %s", selector)
	return time.Time{}
}
