package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestQuietRefresh: refreshes nobody asked for (a webhook's, a periodic
// one) that find nothing new compare the app but do not write it; a
// refresh asked for with the annotation writes reconciledAt.
func TestQuietRefresh(t *testing.T) {
	t.Parallel()
	h, _ := startGuestbook(t, testApp{automated: true})
	before := h.app("guestbook")

	for i := range 2 {
		h.refresh("guestbook")
		testenv.Eventually(t, 30*time.Second, "the refresh", func() bool {
			at, ok := h.ctrl.rec.compared.get("guestbook")
			return ok && at.After(before.Status.ReconciledAt.Add(time.Duration(i+1)*time.Second))
		})
		time.Sleep(time.Second)
	}
	if after := h.app("guestbook"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("quiet refreshes wrote the app: resourceVersion %s -> %s, reconciledAt %s -> %s",
			before.ResourceVersion, after.ResourceVersion, before.Status.ReconciledAt, after.Status.ReconciledAt)
	}

	h.annotate("guestbook", AnnotationRefresh, "normal")
	h.waitApp("guestbook", 30*time.Second, "reconciledAt written by the refresh asked for", func(a *v1alpha1.Application) bool {
		_, pending := a.Annotations[AnnotationRefresh]
		return !pending && a.Status.ReconciledAt.After(before.Status.ReconciledAt.Time)
	})
}

// TestRefreshMemo: a refresh nobody asked for that finds the app's
// revision and live objects as they were reuses the last comparison's
// outcome; a live object changed since is compared again (and found out
// of sync), and so is a new commit once its refs are listed.
func TestRefreshMemo(t *testing.T) {
	t.Parallel()
	h, repo := startGuestbook(t, testApp{syncNow: true})
	rec := h.ctrl.rec
	refreshed := func(what string) {
		t.Helper()
		before, _ := rec.compared.get("guestbook")
		rec.refreshes.mark("guestbook", normalRefresh)
		rec.enqueue(h.ns, "guestbook")
		testenv.Eventually(t, 30*time.Second, what, func() bool {
			at, ok := rec.compared.get("guestbook")
			return ok && at.After(before)
		})
	}

	hits := rec.comparer.Memoized()
	refreshed("a refresh with nothing changed")
	if got := rec.comparer.Memoized(); got != hits+1 {
		t.Errorf("comparisons answered from the memo: %d, want %d", got-hits, 1)
	}

	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: h.ns, Name: "settings"}
	if err := h.c.Get(t.Context(), key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "red"
	if err := h.c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	h.waitApp("guestbook", 30*time.Second, "OutOfSync after the live ConfigMap changed", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	commit := repo.Commit(map[string]string{"guestbook/configmap.yaml": guestbookConfigMap + "  shape: round\n"}, "shape")
	time.Sleep(revisionMaxAge(&Settings{ReconcileTimeout: defaultReconcileTimout}))
	refreshed("a refresh after a commit")
	h.waitApp("guestbook", 30*time.Second, "the new commit compared", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == commit
	})
}

// startGuestbook runs a controller and the guestbook app of one ConfigMap,
// synced as a says, and waits until it is Synced and Healthy and the
// writes of its sync's end settled.
func startGuestbook(t *testing.T, a testApp) (*harness, *testenv.GitRepo) {
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	a.name, a.repoURL = "guestbook", repo.Dir
	h.create(a)
	h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	time.Sleep(2 * time.Second)
	return h, repo
}
