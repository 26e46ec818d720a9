package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

const settingsJSON = `{
  "apiVersion": "v1",
  "kind": "ConfigMap",
  "metadata": {"name": "settings"},
  "data": {"color": "blue"}
}
`

// A JSON manifest that stops parsing must fail the comparison, not be
// skipped: a render without it would prune the ConfigMap it defines.
func TestBrokenFileNeverPrunes(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"guestbook/settings.json": settingsJSON,
		"guestbook/values.yaml":   "replicas: 2\n",
		"guestbook/other.yaml":    strings.Replace(guestbookConfigMap, "name: settings", "name: other", 1),
	})
	h.apply(strings.ReplaceAll(guestbookApp, "REPO", repo.Dir))
	app := h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	if got, want := conditionMessage(app, v1alpha1.ApplicationConditionRenderWarning),
		"skipped guestbook/values.yaml: not a Kubernetes object: apiVersion is missing"; got != want {
		t.Errorf("RenderWarning = %q, want %q", got, want)
	}
	synced := app.Status.Sync.Revision

	head := repo.Commit(map[string]string{"guestbook/settings.json": strings.TrimSuffix(settingsJSON, "}\n")}, "truncated JSON")
	h.refresh("guestbook")
	h.waitApp("guestbook", 30*time.Second, "a ComparisonError naming the file and line", func(a *v1alpha1.Application) bool {
		return strings.Contains(conditionMessage(a, v1alpha1.ApplicationConditionComparisonError), "guestbook/settings.json:")
	})
	// The refresh that found the error has run; let a sync that should not
	// happen have its chance before looking.
	time.Sleep(2 * time.Second)
	app = h.app("guestbook")
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("ConfigMap after a broken JSON file under prune: true: %v (status: %s)", err, describe(app))
	}
	if app.Status.Sync.Revision != synced || app.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
		t.Errorf("sync = %s at %s, want Unknown at the last synced %s (head %s)", app.Status.Sync.Status, app.Status.Sync.Revision, synced, head)
	}
}
