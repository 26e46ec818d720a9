package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestHistoryAndRollback syncs two revisions, then rolls back to the first
// the way `wavecd app rollback` does: each successful sync adds a history
// entry, and the rollback applies the older revision.
func TestHistoryAndRollback(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	ctx := context.Background()
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/cm.yaml": guestbookConfigMap})
	first := repo.Git("rev-parse", "HEAD")
	h.create(testApp{name: "guestbook", repoURL: repo.Dir})
	ac, err := appclient.New(h.env.Config, h.ns, "tester")
	if err != nil {
		t.Fatal(err)
	}
	syncAndWait := func(run func(context.Context) (*v1alpha1.Application, error), entries int) {
		t.Helper()
		h.waitApp("guestbook", 30*time.Second, "compared", func(a *v1alpha1.Application) bool { return a.Status.Sync.Status != "" })
		if _, err := run(ctx); err != nil {
			t.Fatal(err)
		}
		h.waitApp("guestbook", 30*time.Second, "the sync recorded", func(a *v1alpha1.Application) bool {
			return a.Operation == nil && len(a.Status.History) == entries
		})
	}
	syncAndWait((&appclient.Sync{Client: ac, Name: "guestbook"}).Run, 1)
	second := repo.Commit(map[string]string{"guestbook/cm.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "green")
	h.refresh("guestbook")
	h.waitApp("guestbook", 30*time.Second, "OutOfSync at the second commit", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Revision == second && a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	syncAndWait((&appclient.Sync{Client: ac, Name: "guestbook"}).Run, 2)
	if got := color(t, h); got != "green" {
		t.Fatalf("color after the second sync = %q, want green", got)
	}
	syncAndWait((&appclient.Rollback{Client: ac, Name: "guestbook", ID: 0}).Run, 3)
	if got := color(t, h); got != "blue" {
		t.Errorf("color after the rollback = %q, want blue", got)
	}
	app := h.app("guestbook")
	var got []string
	for _, e := range app.Status.History {
		got = append(got, e.Revision+" by "+e.InitiatedBy.Username)
	}
	want := []string{first + " by tester", second + " by tester", first + " by tester"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
	if ids := []int64{app.Status.History[0].ID, app.Status.History[2].ID}; ids[0] != 0 || ids[1] != 2 {
		t.Errorf("history IDs %v, want 0 and 2", ids)
	}
	if app.Status.OperationState.SyncResult.Revision != first {
		t.Errorf("rollback synced revision %s, want %s", app.Status.OperationState.SyncResult.Revision, first)
	}
}

func color(t *testing.T, h *harness) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["color"]
}

// TestHistoryLimit keeps the last 10 entries, or revisionHistoryLimit.
