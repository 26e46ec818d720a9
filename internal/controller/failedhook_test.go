package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// failingPreSync is a PreSync hook whose pod exits 1.
const failingPreSync = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: migrate-
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {localcluster.wavecd.io/exit-code: "1"}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: example/migrate:2}]
`

// TestFailedHookLeavesAppOutOfSync: a new revision whose PreSync hook fails
// applies nothing, so while the sync waits for its retry the app is
// OutOfSync: its Deployment still runs the old image.
func TestFailedHookLeavesAppOutOfSync(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"web/deploy.yaml": slowDeployment})
	h.create(testApp{name: "web", repoURL: repo.Dir, automated: true})
	h.waitApp("web", 60*time.Second, "Synced and Healthy", syncedHealthy)
	repo.Commit(map[string]string{
		"web/deploy.yaml":  strings.Replace(slowDeployment, "image: redis:7", "image: redis:8", 1),
		"web/migrate.yaml": failingPreSync,
	}, "redis 8 with a migration")
	h.annotate("web", AnnotationRefresh, "normal")
	h.waitApp("web", 60*time.Second, "the hook to fail", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && strings.Contains(op.Message, "Retrying attempt #1")
	})
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		app := h.app("web")
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
			t.Fatalf("after a failed PreSync hook: sync %s, want OutOfSync (the Deployment was not applied); %s", app.Status.Sync.Status, describe(app))
		}
	}
}
