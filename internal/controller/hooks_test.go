package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// The hooks of Argo CD's example apps, as users copy them: a generateName
// PreSync Job without a delete policy, a named Sync hook in wave 1 with
// BeforeHookCreation, a Helm pre-install generateName Job with a weight
// and a named PostSync hook deleted once it succeeded.
var exampleHooks = map[string]string{
	"hooks/presync.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  generateName: upgrade-sql-schema
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  template:
    spec:
      containers: [{name: upgrade-sql-schema, image: alpine:latest, command: [sleep, "1"]}]
      restartPolicy: Never
`,
	"hooks/sync.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: maint-page-up
  annotations:
    argocd.argoproj.io/hook: Sync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
    argocd.argoproj.io/sync-wave: "1"
spec:
  template:
    spec:
      containers: [{name: page-up, image: alpine:latest, command: [sleep, "1"]}]
      restartPolicy: Never
  backoffLimit: 0
`,
	"hooks/helm.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  generateName: helm-schema-
  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "-2"}
spec:
  template:
    spec:
      containers: [{name: schema, image: alpine:latest}]
      restartPolicy: Never
`,
	"hooks/post.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: after
  annotations: {argocd.argoproj.io/hook: PostSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
spec:
  template:
    spec:
      containers: [{name: sleep, image: alpine:latest}]
      restartPolicy: Never
`,
	"hooks/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: live}
`,
}

// TestHooksStayOutOfSyncStatus syncs an app with generateName, named and
// Helm hooks under automated sync with self-heal, then refreshes it: the
// live hooks are listed as hooks, the app stays Synced, and no hook runs
// again.
func TestHooksStayOutOfSyncStatus(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	jobs := watchHookJobs(t, h)
	repo := testenv.NewGitRepo(t, exampleHooks)
	h.create(testApp{name: "hooks", repoURL: repo.Dir, automated: true})
	synced := h.waitApp("hooks", 90*time.Second, "the first sync to succeed", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	startedAt := synced.Status.OperationState.StartedAt
	h.annotate("hooks", AnnotationRefresh, "hard")
	refreshed := h.waitApp("hooks", 30*time.Second, "the hard refresh", func(a *v1alpha1.Application) bool {
		_, pending := a.Annotations[AnnotationRefresh]
		return !pending
	})
	if refreshed.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Errorf("after a hard refresh: sync status %s, want Synced; resources: %+v", refreshed.Status.Sync.Status, refreshed.Status.Resources)
	}
	if op := refreshed.Status.OperationState; op == nil || !op.StartedAt.Equal(&startedAt) {
		t.Errorf("a new sync started after the first one: %s", describe(refreshed))
	}
	hooks := map[string]bool{}
	for _, r := range refreshed.Status.Resources {
		if r.Kind != "Job" {
			continue
		}
		if !r.Hook || r.Status != "" || r.RequiresPruning || r.Health != nil {
			t.Errorf("live hook %s: hook=%v status=%q requiresPruning=%v health=%v, want a hook without status or health",
				r.Name, r.Hook, r.Status, r.RequiresPruning, r.Health)
		}
		hooks[strings.TrimRight(r.Name, "0123456789")] = true
	}
	if len(hooks) != 3 {
		t.Errorf("hooks listed in status.resources: %v, want the PreSync, Helm and Sync Jobs (the PostSync one was deleted)", hooks)
	}
	if d := cmp.Diff(map[string]int{"PreSync": 2, "Sync": 1, "PostSync": 1}, jobs()); d != "" {
		t.Errorf("hook Jobs created per phase (-want +got):\n%s", d)
	}
}
