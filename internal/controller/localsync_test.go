package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/testenv"
)

const localConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: local-only
data:
  from: laptop
`

// TestLocalSync syncs the objects an operation carries in
// operation.sync.manifests, as `argocd app sync --local` sends them,
// instead of what Git holds: they are applied with the app's tracking, the
// app is OutOfSync against Git after, and pruning removes what only Git
// had. An app with automated sync takes local manifests in a dry run
// only, and a bad manifest is refused before anything is written.
func TestLocalSync(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	ctx := context.Background()
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/cm.yaml": guestbookConfigMap, "auto/cm.yaml": guestbookConfigMap})
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, syncNow: true})
	h.waitApp("guestbook", 60*time.Second, "synced from Git", syncedHealthy)
	ac, err := appclient.New(h.env.Config, h.ns, "tester")
	if err != nil {
		t.Fatal(err)
	}
	local := []string{strings.Replace(guestbookConfigMap, "blue", "red", 1), localConfigMap}
	if _, err := (&appclient.Sync{Client: ac, Name: "guestbook", Manifests: local, Prune: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	app := h.waitApp("guestbook", 60*time.Second, "the local sync done", func(a *v1alpha1.Application) bool {
		return a.Operation == nil && a.Status.OperationState != nil && a.Status.OperationState.Phase.Completed() &&
			a.Status.OperationState.Operation.Sync.Manifests != nil
	})
	if st := app.Status.OperationState; st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("local sync %s: %s", st.Phase, st.Message)
	}
	if got := color(t, h); got != "red" {
		t.Errorf("color after the local sync = %q, want red", got)
	}
	cm := &corev1.ConfigMap{}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "local-only"}, cm); err != nil {
		t.Fatalf("the local-only ConfigMap: %v", err)
	}
	if cm.Annotations["argocd.argoproj.io/tracking-id"] == "" && cm.Labels["app.kubernetes.io/instance"] == "" {
		t.Errorf("local-only carries no tracking: labels %v annotations %v", cm.Labels, cm.Annotations)
	}
	h.waitApp("guestbook", 60*time.Second, "OutOfSync against Git", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	// Pruning a local sync removes what the manifests do not hold.
	if _, err := (&appclient.Sync{Client: ac, Name: "guestbook", Manifests: local[1:], Prune: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "settings pruned by the second local sync", func() bool {
		err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "settings"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err)
	})

	h.create(testApp{name: "auto", repoURL: repo.Dir, automated: true})
	h.waitApp("auto", 60*time.Second, "synced", syncedHealthy)
	_, err = (&appclient.Sync{Client: ac, Name: "auto", Manifests: local}).Run(ctx)
	if want := "cannot use local sync when Automatic Sync Policy is enabled unless for dry run"; err == nil || err.Error() != want {
		t.Errorf("local sync of an automated app: %v, want %q", err, want)
	}
	if _, err := (&appclient.Sync{Client: ac, Name: "auto", Manifests: local, DryRun: true}).Run(ctx); err != nil {
		t.Errorf("local dry run of an automated app: %v", err)
	}
	_, err = (&appclient.Sync{Client: ac, Name: "guestbook", Manifests: []string{"kind: ConfigMap\nmetadata: {name: x}\n"}}).Run(ctx)
	if want := "operation.sync.manifests[0]: apiVersion is missing"; err == nil || err.Error() != want {
		t.Errorf("a manifest without apiVersion: %v, want %q", err, want)
	}
}
