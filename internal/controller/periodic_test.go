package controller

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestNextRefresh(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 300*int(time.Millisecond), time.UTC)
	compared := func(ago time.Duration) *v1alpha1.Application {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}}
		app.Status.ReconciledAt = &metav1.Time{Time: now.Add(-ago)}
		return app
	}
	never := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "web"}}
	for name, tc := range map[string]struct {
		app      *v1alpha1.Application
		timeout  time.Duration
		jitter   time.Duration
		min, max time.Duration
	}{
		"never compared: a full timeout":         {app: never, timeout: time.Minute, min: time.Minute, max: time.Minute + refreshTick},
		"never compared, with its jitter":        {app: never, timeout: time.Minute, jitter: 10 * time.Second, min: time.Minute, max: time.Minute + 10*time.Second + refreshTick},
		"compared 20 s ago: the rest":            {app: compared(20 * time.Second), timeout: time.Minute, min: 40 * time.Second, max: 41 * time.Second},
		"overdue: a second from now":             {app: compared(2 * time.Minute), timeout: time.Minute, min: time.Second, max: 2 * time.Second},
		"periodic refresh off (timeout 0)":       {app: compared(time.Hour), min: 0, max: 0},
		"compared 20 s ago, with its jitter":     {app: compared(20 * time.Second), timeout: time.Minute, jitter: time.Minute, min: 40 * time.Second, max: 101 * time.Second},
		"a jitter longer than the timeout holds": {app: never, timeout: time.Second, jitter: time.Hour, min: time.Second, max: time.Hour + 2*time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{now: func() time.Time { return now }}
			s := &Settings{ReconcileTimeout: tc.timeout, ReconcileJitter: tc.jitter}
			d := r.nextRefresh(tc.app, s)
			if d < tc.min || d > tc.max {
				t.Fatalf("next refresh in %v, want between %v and %v", d, tc.min, tc.max)
			}
			if due := now.Add(d); d > 0 && !due.Equal(due.Truncate(refreshTick)) {
				t.Errorf("due at %v, not on a whole %v", due, refreshTick)
			}
			if again := r.nextRefresh(tc.app, s); again != d {
				t.Errorf("the same app at the same moment is due in %v, then in %v", d, again)
			}
		})
	}
}

// TestRefreshJitterSpread: the apps' shares of the jitter cover it
// evenly, so a round of periodic refreshes is spread over it.
func TestRefreshJitterSpread(t *testing.T) {
	const apps, buckets = 6000, 6
	jitter := time.Minute
	var count [buckets]int
	for i := range apps {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: fmt.Sprintf("a%d", i)}}
		j := refreshJitter(app, jitter)
		if j < 0 || j >= jitter {
			t.Fatalf("%s: jitter %v, want within [0, %v)", app.Name, j, jitter)
		}
		count[j*buckets/jitter]++
	}
	for b, n := range count {
		if n < apps/buckets*8/10 || n > apps/buckets*12/10 {
			t.Errorf("%d of %d apps in sixth %d of the jitter, want about %d: %v", n, apps, b, apps/buckets, count)
		}
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "a1"}}
	if j := refreshJitter(app, 0); j != 0 {
		t.Errorf("no jitter configured: got %v", j)
	}
}
