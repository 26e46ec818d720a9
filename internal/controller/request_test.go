package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestOneWritePerSync: an automated sync that only applies writes the app
// once, its result, which carries the request, the comparison after the
// sync and a history entry; every write the API server sees is counted
// through a watch from the app's creation.
func TestOneWritePerSync(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := h.env.Dynamic.Resource(v1alpha1.SchemeGroupVersion.WithResource("applications")).Namespace(h.ns).
		Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, automated: true})

	var writes []string
	for ev := range w.ResultChan() {
		if ev.Type != watch.Modified {
			continue
		}
		app := &v1alpha1.Application{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ev.Object.(*unstructured.Unstructured).Object, app); err != nil {
			t.Fatal(err)
		}
		op := app.Status.OperationState
		writes = append(writes, fmt.Sprintf("%s, sync requested: %v", describe(app), app.Operation != nil))
		if syncedHealthy(app) && op != nil && op.Phase == v1alpha1.OperationSucceeded {
			if len(writes) != 1 {
				t.Errorf("the sync wrote the app %d times, want once (its result):\n%s", len(writes), strings.Join(writes, "\n"))
			}
			if app.Operation != nil || len(app.Status.History) != 1 || !op.Operation.InitiatedBy.Automated {
				t.Errorf("the result: operation %v, %d history entries, initiated by %+v; want no operation, one entry, automated",
					app.Operation, len(app.Status.History), op.Operation.InitiatedBy)
			}
			return
		}
	}
	t.Fatalf("the app was not Synced and Healthy within 60s; writes:\n%s", strings.Join(writes, "\n"))
}

// TestRequestWrittenWhileWaiting: with one operation processor, busy with
// a sync that waits on a Deployment that never becomes ready, a second
// app's automated sync waits for the processor; its request and its
// OutOfSync comparison are written meanwhile, within moments, not when
// the sync gets to run.
func TestRequestWrittenWhileWaiting(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{OperationProcessors: 1})
	repo := testenv.NewGitRepo(t, map[string]string{
		"web/deployment.yaml":      strings.ReplaceAll(webDeployment, "NODESELECTOR", `nodeSelector: {wavecd.io/no-such-node: "true"}`),
		"web/later.yaml":           laterConfigMap,
		"guestbook/configmap.yaml": guestbookConfigMap,
	})
	h.create(testApp{name: "web", repoURL: repo.Dir, automated: true})
	h.waitApp("web", 60*time.Second, "web's sync waiting on wave 0", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == v1alpha1.OperationRunning
	})
	created := time.Now()
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, automated: true})
	h.waitApp("guestbook", 30*time.Second, "guestbook's request written, OutOfSync and not run", func(a *v1alpha1.Application) bool {
		return a.Operation != nil && a.Operation.InitiatedBy.Automated &&
			a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && a.Status.OperationState == nil
	})
	t.Logf("request written %v after the app's creation", time.Since(created).Round(100*time.Millisecond))
}
