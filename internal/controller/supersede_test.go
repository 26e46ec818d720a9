package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// migrateHook is a PreSync migration, named from a generateName as charts
// write them: each sync creates its own.
var migrateHook = strings.NewReplacer("name: NAME", "generateName: migrate-", "PHASE", "PreSync").Replace(hookJob)

// webDeployment is the app's Deployment; NODESELECTOR is where a bad
// commit pins it to nodes that do not exist.
const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      NODESELECTOR
      containers: [{name: web, image: nginx}]
`

const laterConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: later
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {a: "1"}
`

// TestNewRevisionUnsticksSync: an automated sync waits on a wave that can
// never become healthy; a fixing commit and a refresh stop it at once and
// a new sync runs on the new revision; the history shows both, and each
// sync ran its hook once.
func TestNewRevisionUnsticksSync(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"web/hook.yaml":       migrateHook,
		"web/deployment.yaml": strings.ReplaceAll(webDeployment, "NODESELECTOR", `nodeSelector: {wavecd.io/no-such-node: "true"}`),
		"web/later.yaml":      laterConfigMap,
	})
	first := repo.Git("rev-parse", "HEAD")
	h.create(testApp{name: "web", repoURL: repo.Dir, automated: true})
	h.waitApp("web", 60*time.Second, "the sync waiting on wave 0", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == v1alpha1.OperationRunning && strings.Contains(op.Message, "Deployment "+h.ns+"/web")
	})
	second := repo.Commit(map[string]string{"web/deployment.yaml": strings.ReplaceAll(webDeployment, "NODESELECTOR", "")}, "fix the node selector")
	refreshed := time.Now()
	h.refresh("web")
	app := h.waitApp("web", 60*time.Second, "Synced and Healthy at the fix", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && a.Status.OperationState != nil && a.Status.OperationState.SyncResult != nil &&
			a.Status.OperationState.SyncResult.Revision == second
	})
	started := app.Status.OperationState.StartedAt.Time
	t.Logf("the new sync started %v after the refresh", started.Sub(refreshed).Round(100*time.Millisecond))
	if started.Sub(refreshed) > 10*time.Second {
		t.Errorf("the new sync started %v after the refresh, want within a few seconds", started.Sub(refreshed))
	}
	var revisions []string
	for _, hist := range app.Status.History {
		revisions = append(revisions, hist.Revision)
	}
	if len(revisions) != 2 || revisions[0] != first || revisions[1] != second {
		t.Errorf("history revisions = %v, want the stuck sync's %s then the fix's %s", revisions, first, second)
	}
	jobs := &batchv1.JobList{}
	if err := h.c.List(context.Background(), jobs, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	perRevision := map[string]int{}
	for _, j := range jobs.Items {
		for _, rev := range []string{first, second} {
			if strings.HasPrefix(j.Name, "migrate-"+rev[:7]) {
				perRevision[rev[:7]]++
			}
		}
	}
	if len(jobs.Items) != 2 || perRevision[first[:7]] != 1 || perRevision[second[:7]] != 1 {
		t.Errorf("hook jobs per revision = %v of %d jobs, want one per sync", perRevision, len(jobs.Items))
	}
}

func TestSupersedes(t *testing.T) {
	const newRevision = "2f8490f107ef2f80baad26dd21b4146ea09adf01"
	tests := map[string]struct {
		app    string
		parity bool
		// syncing is the revision the current attempt renders; the
		// operation's when empty.
		syncing string
		want    bool
	}{
		"automated sync, a new revision found":                   {"new-revision", false, "", true},
		"Argo CD parity leaves a running sync alone":             {"new-revision", true, "", false},
		"the revision being synced is still the last":            {"same-revision", false, "", false},
		"a retry.refresh attempt already syncs the new revision": {"new-revision", false, newRevision, false},
		"a manual sync is never superseded":                      {"manual-sync", false, "", false},
		"the comparison was of an older spec":                    {"compared-to-old-spec", false, "", false},
		"several sources: the operation names no revision":       {"multi-source", false, "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "supersede", tc.app+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			app := &v1alpha1.Application{}
			if err := yaml.UnmarshalStrict(data, app); err != nil {
				t.Fatalf("%s: %v", tc.app, err)
			}
			r := &starter{argoParity: tc.parity}
			if got := r.supersedes(app, tc.syncing); got != tc.want {
				t.Errorf("supersedes = %v, want %v", got, tc.want)
			}
		})
	}
}

// badConfigMap fails its dry run: data values are strings.
const badConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {replicas: 3}
`

// TestRetryRefreshSyncsTheLatestRevision: with Argo CD's retry.refresh, a
// failed automated sync's retry syncs the revision pushed meanwhile (here
// in Argo CD parity, which honours it too).
func TestRetryRefreshSyncsTheLatestRevision(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{ArgoParity: true})
	repo := testenv.NewGitRepo(t, map[string]string{"web/settings.yaml": badConfigMap})
	h.apply(strings.ReplaceAll(`
metadata: {name: web}
spec:
  project: default
  source: {repoURL: REPO, path: web, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy:
    automated: {prune: true}
    retry: {limit: 3, backoff: {duration: 3s}, refresh: true}
`, "REPO", repo.Dir))
	h.waitApp("web", 60*time.Second, "the first attempt failed, a retry pending", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.RetryCount >= 1 && strings.Contains(op.Message, "Retrying attempt")
	})
	second := repo.Commit(map[string]string{"web/settings.yaml": guestbookConfigMap}, "fix the ConfigMap")
	h.refresh("web")
	h.waitApp("web", 60*time.Second, "Synced at the fix by a retry", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return syncedHealthy(a) && op != nil && op.Phase == v1alpha1.OperationSucceeded && op.SyncResult != nil &&
			op.SyncResult.Revision == second && op.RetryCount >= 1
	})
}

// TestSyncTimeoutFailsWithTheWait: wavecd.io/sync-timeout fails an
// operation stuck on a wave, with what it waited for.
func TestSyncTimeoutFailsWithTheWait(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"web/deployment.yaml": strings.ReplaceAll(webDeployment, "NODESELECTOR", `nodeSelector: {wavecd.io/no-such-node: "true"}`),
		"web/later.yaml":      laterConfigMap,
	})
	h.create(testApp{name: "web", repoURL: repo.Dir, automated: true, annotations: map[string]string{"wavecd.io/sync-timeout": "3s"}})
	app := h.waitApp("web", 60*time.Second, "the operation failed", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationFailed
	})
	op := app.Status.OperationState
	want := "sync timeout 3s (wavecd.io/sync-timeout) reached while in Sync wave 0, waiting for Deployment " + h.ns + "/web: 0/1 ready; pod web-"
	if !strings.HasPrefix(op.Message, want) {
		t.Errorf("operation message = %q, want %q...", op.Message, want)
	}
	if took := op.FinishedAt.Sub(op.StartedAt.Time); took > 10*time.Second {
		t.Errorf("the operation took %v with a 3s timeout", took)
	}
}
