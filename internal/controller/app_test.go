package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

const guestbookConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  size: large
`

const guestbookDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`

const guestbookApp = `
metadata:
  name: guestbook
spec:
  project: default
  source: {repoURL: REPO, path: guestbook, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
`

func TestAppSyncsPrunesAndSelfHeals(t *testing.T) {
	h := startController(t, Options{})
	repo := newGitRepo(t, map[string]string{
		"guestbook/configmap.yaml": guestbookConfigMap, "guestbook/deployment.yaml": guestbookDeployment,
	})
	h.apply(strings.ReplaceAll(guestbookApp, "REPO", repo.dir))
	app := h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	if got, want := app.Status.Sync.Revision, repo.git("rev-parse", "HEAD"); got != want {
		t.Fatalf("synced revision = %s, want %s", got, want)
	}
	if len(app.Status.History) != 1 {
		t.Fatalf("history has %d entries, want 1", len(app.Status.History))
	}
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: h.ns, Name: "settings"}
	if err := h.c.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Annotations["argocd.argoproj.io/tracking-id"] != "guestbook:/ConfigMap:"+h.ns+"/settings" {
		t.Fatalf("tracking id = %q", cm.Annotations["argocd.argoproj.io/tracking-id"])
	}

	t.Run("self-heal reverts a manual edit", func(t *testing.T) {
		cm.Data["color"] = "red"
		if err := h.c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "color back to blue", func() bool {
			got := &corev1.ConfigMap{}
			return h.c.Get(ctx, key, got) == nil && got.Data["color"] == "blue"
		})
	})

	t.Run("a removed key and a removed file are applied and pruned", func(t *testing.T) {
		repo.commit(map[string]string{
			"guestbook/configmap.yaml":  strings.Replace(guestbookConfigMap, "  size: large\n", "", 1),
			"guestbook/deployment.yaml": "",
		}, "drop size and the deployment")
		h.refresh("guestbook")
		eventually(t, 60*time.Second, "key size removed and deployment pruned", func() bool {
			got := &corev1.ConfigMap{}
			if h.c.Get(ctx, key, got) != nil {
				return false
			}
			_, hasSize := got.Data["size"]
			return !hasSize && deploymentGone(h)
		})
		h.waitApp("guestbook", 30*time.Second, "Synced and Healthy again", syncedHealthy)
	})

	t.Run("a render error changes nothing and sets a condition", func(t *testing.T) {
		repo.commit(map[string]string{"guestbook/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not a map\n"}, "broken")
		h.refresh("guestbook")
		app := h.waitApp("guestbook", 30*time.Second, "a ComparisonError condition", func(a *v1alpha1.Application) bool {
			return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
		})
		if err := h.c.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("ConfigMap after a render error: %v (status: %s)", err, describe(app))
		}
	})
}

func deploymentGone(h *harness) bool {
	obj := &appsv1.Deployment{}
	err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "web"}, obj)
	return apierrors.IsNotFound(err)
}

// refresh asks for a refresh the way a webhook does.
func (h *harness) refresh(name string) {
	h.t.Helper()
	if err := h.ctrl.Refresh(context.Background(), h.ns, name, false); err != nil {
		h.t.Fatal(err)
	}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}
