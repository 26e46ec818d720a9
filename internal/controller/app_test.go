package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
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
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"guestbook/configmap.yaml": guestbookConfigMap, "guestbook/deployment.yaml": guestbookDeployment,
	})
	h.apply(strings.ReplaceAll(guestbookApp, "REPO", repo.Dir))
	app := h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	checkStatus(t, h, app, repo.Git("rev-parse", "HEAD"))
	ctx := context.Background()
	key := client.ObjectKey{Namespace: h.ns, Name: "settings"}

	t.Run("self-heal reverts a manual edit", func(t *testing.T) {
		cm := &corev1.ConfigMap{}
		if err := h.c.Get(ctx, key, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["color"] = "red"
		if err := h.c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "color back to blue", func() bool {
			got := &corev1.ConfigMap{}
			return h.c.Get(ctx, key, got) == nil && got.Data["color"] == "blue"
		})
	})

	t.Run("the refresh annotation refreshes and is removed", func(t *testing.T) {
		testRefreshAnnotation(t, h.in(t), repo)
	})

	t.Run("a removed key and a removed file are applied and pruned", func(t *testing.T) {
		h := h.in(t)
		repo.Commit(map[string]string{
			"guestbook/configmap.yaml":  strings.Replace(guestbookConfigMap, "  size: large\n", "", 1),
			"guestbook/deployment.yaml": "",
		}, "drop size and the deployment")
		h.refresh("guestbook")
		testenv.Eventually(t, 60*time.Second, "key size removed and deployment pruned", func() bool {
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
		h := h.in(t)
		repo.Commit(map[string]string{"guestbook/broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [not a map\n"}, "broken")
		h.refresh("guestbook")
		app := h.waitApp("guestbook", 30*time.Second, "a ComparisonError condition", func(a *v1alpha1.Application) bool {
			return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
		})
		if err := h.c.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("ConfigMap after a render error: %v (status: %s)", err, describe(app))
		}
	})

	t.Run("an unreachable Git server changes nothing and sets a condition", func(t *testing.T) {
		testUnreachableGit(t, h.in(t))
	})
}

// testRefreshAnnotation commits a change and asks for a refresh with the
// annotation, as `argocd app get --refresh` does.
func testRefreshAnnotation(t *testing.T, h *harness, repo *testenv.GitRepo) {
	h.waitApp("guestbook", 30*time.Second, "Synced and Healthy", syncedHealthy)
	repo.Commit(map[string]string{"guestbook/configmap.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "green")
	h.annotate("guestbook", AnnotationRefresh, "hard")
	testenv.Eventually(t, 30*time.Second, "color green", func() bool {
		got := &corev1.ConfigMap{}
		return h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, got) == nil && got.Data["color"] == "green"
	})
	h.waitApp("guestbook", 30*time.Second, "the refresh annotation removed", func(a *v1alpha1.Application) bool {
		_, ok := a.Annotations[AnnotationRefresh]
		return !ok
	})
}

// testUnreachableGit points the synced app at a Git server that refuses
// connections: a condition says so, and nothing in the cluster changes.
func testUnreachableGit(t *testing.T, h *harness) {
	ctx := context.Background()
	before := h.app("guestbook")
	base := before.DeepCopy()
	before.Spec.Source.RepoURL = "http://127.0.0.1:1/x.git"
	if err := h.c.Patch(ctx, before, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	app := h.waitApp("guestbook", 30*time.Second, "a ComparisonError naming the server", func(a *v1alpha1.Application) bool {
		return strings.Contains(conditionMessage(a, v1alpha1.ApplicationConditionComparisonError), "127.0.0.1:1")
	})
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "settings"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("ConfigMap with Git unreachable: %v (status: %s)", err, describe(app))
	}
	if len(app.Status.Resources) != 1 || app.Status.Resources[0].Name != "settings" {
		t.Errorf("resources with Git unreachable = %+v, want the last known ConfigMap", app.Status.Resources)
	}
	if app.Operation != nil || len(app.Status.History) != len(base.Status.History) {
		t.Errorf("a sync ran with Git unreachable: operation %+v, history %d entries (was %d)", app.Operation, len(app.Status.History), len(base.Status.History))
	}
}

// checkResultTimes checks that each result of the sync says when its
// object was applied and turned Healthy (wavecd's fields for the sync
// timeline), within the operation.
func checkResultTimes(t *testing.T, op *v1alpha1.OperationState) {
	t.Helper()
	if op == nil || op.SyncResult == nil || op.FinishedAt == nil {
		t.Errorf("no finished operation with a result: %+v", op)
		return
	}
	from, to := op.StartedAt.Add(-time.Second), op.FinishedAt.Add(time.Second)
	for _, r := range op.SyncResult.Resources {
		if r.StartedAt == nil || r.FinishedAt == nil || r.FinishedAt.Before(r.StartedAt) ||
			r.StartedAt.Time.Before(from) || r.FinishedAt.Time.After(to) {
			t.Errorf("result %s/%s: started %v, finished %v; want both within the operation (%v to %v)",
				r.Kind, r.Name, r.StartedAt, r.FinishedAt, op.StartedAt, op.FinishedAt)
		}
	}
}

// checkStatus checks the status fields Argo CD writes after a first sync
// of the guestbook app at revision head.
func checkStatus(t *testing.T, h *harness, app *v1alpha1.Application, head string) {
	t.Helper()
	st := app.Status
	var resources []string
	for _, r := range st.Resources {
		health := ""
		if r.Health != nil {
			health = string(r.Health.Status)
		}
		resources = append(resources, fmt.Sprintf("%s/%s %s/%s %s %s", r.Group, r.Kind, r.Namespace, r.Name, r.Status, health))
	}
	var results []string
	if st.OperationState != nil && st.OperationState.SyncResult != nil {
		for _, r := range st.OperationState.SyncResult.Resources {
			results = append(results, fmt.Sprintf("%s/%s %s %s", r.Group, r.Kind, r.Name, r.Status))
		}
	}
	got := map[string]any{
		"resources": resources, "images": st.Summary.Images, "conditions": len(st.Conditions),
		"sourceType": st.SourceType, "revision": st.Sync.Revision, "syncResult": results,
		"history": len(st.History), "controllerNamespace": st.ControllerNamespace,
	}
	want := map[string]any{
		"resources":           []string{"/ConfigMap " + h.ns + "/settings Synced ", "apps/Deployment " + h.ns + "/web Synced Healthy"},
		"images":              []string{"nginx:1.27"},
		"conditions":          0,
		"sourceType":          "Directory",
		"revision":            head,
		"syncResult":          []string{"/ConfigMap settings Synced", "apps/Deployment web Synced"},
		"history":             1,
		"controllerNamespace": h.ns,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	checkResultTimes(t, st.OperationState)
	if st.ReconciledAt == nil || st.OperationState.SyncResult.Revision != head || st.History[0].Revision != head {
		t.Errorf("reconciledAt %v, sync result revision %q, history %+v: want set and %s", st.ReconciledAt, st.OperationState.SyncResult.Revision, st.History, head)
	}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "default"}, &v1alpha1.AppProject{}); err != nil {
		t.Errorf("the default AppProject was not created: %v", err)
	}
	cm := &corev1.ConfigMap{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	if id := cm.Annotations["argocd.argoproj.io/tracking-id"]; id != "guestbook:/ConfigMap:"+h.ns+"/settings" {
		t.Errorf("tracking id = %q", id)
	}
}

// annotate sets an annotation on an app.
func (h *harness) annotate(name, key, value string) {
	h.t.Helper()
	app := h.app(name)
	base := app.DeepCopy()
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[key] = value
	if err := h.c.Patch(context.Background(), app, client.MergeFrom(base)); err != nil {
		h.t.Fatal(err)
	}
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
