package controller

import (
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestQuietRefresh: refreshes nobody asked for (a webhook's, a periodic
// one) that find nothing new compare the app but do not write it; a
// refresh asked for with the annotation writes reconciledAt.
func TestQuietRefresh(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, automated: true})
	h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	time.Sleep(2 * time.Second) // the writes of the sync's end settle
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
