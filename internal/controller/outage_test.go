package controller

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// A Git repository that goes away and comes back: the ComparisonError it
// caused clears within seconds of the repair, without a webhook or a
// manual refresh, instead of at the next periodic refresh minutes later.
func TestComparisonRetriedAfterGitOutage(t *testing.T) {
	t.Parallel()
	m, reconciles := countingMetrics(t)
	h := startController(t, Options{Metrics: m})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	h.apply(strings.ReplaceAll(guestbookApp, "REPO", repo.Dir))
	h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)

	if err := os.Rename(repo.Dir, repo.Dir+".away"); err != nil {
		t.Fatal(err)
	}
	h.refresh("guestbook")
	h.waitApp("guestbook", 30*time.Second, "a ComparisonError", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
	})
	time.Sleep(5 * time.Second) // the outage lasts a while
	if err := os.Rename(repo.Dir+".away", repo.Dir); err != nil {
		t.Fatal(err)
	}
	repaired, before := time.Now(), reconciles()
	// The retry falls due 5 to 10 s after the repair; the window leaves
	// room for a machine loaded by parallel tests under the race
	// detector, and stays well below the periodic refresh (120 s at the
	// least) that the retry replaces.
	cleared := func(a *v1alpha1.Application) bool {
		return !hasCondition(a, v1alpha1.ApplicationConditionComparisonError) && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	}
	testenv.EventuallyState(t, 45*time.Second, "the ComparisonError cleared after the repair", func() (bool, string) {
		a := h.app("guestbook")
		return a != nil && cleared(a), fmt.Sprintf("%v reconciles since the repair; status: %s", reconciles()-before, describe(a))
	})
	t.Logf("compared again %s after the repair", time.Since(repaired).Round(100*time.Millisecond))
}
