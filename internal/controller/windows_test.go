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
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestSyncWindows runs a controller whose clock (Options.Now) reads
// 03:59:45 UTC on 2026-01-05 when the test starts and runs at real speed:
// windows scheduled at 03:00 for 1h close, and windows scheduled at 04:00
// open, 15 s into the test, without waiting for a cron minute. The
// controller must hold syncs with a condition that says until when, and
// start them at the edge without polling.
func TestSyncWindows(t *testing.T) {
	t.Parallel()
	edge := time.Date(2026, 1, 5, 4, 0, 0, 0, time.UTC)
	offset := time.Until(edge.Add(-15 * time.Second))
	h := startController(t, Options{Now: func() time.Time { return time.Now().Add(offset) }})
	tests := windowCases
	files, apps := map[string]string{}, map[string]string{}
	for name := range tests {
		app := "window-" + string(rune('a'+len(apps)))
		apps[name] = app
		files[app+"/cm.yaml"] = strings.ReplaceAll(guestbookConfigMap, "settings", app)
	}
	repo := testenv.NewGitRepo(t, files)
	for name, tc := range tests {
		h.createProject(apps[name], v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere,
			SyncWindows: v1alpha1.SyncWindows{&tc.window}})
		h.create(testApp{name: apps[name], project: apps[name], repoURL: repo.Dir, automated: !tc.manual, syncNow: tc.manual})
	}
	// Every app is checked before the edge, then after it; subtests run
	// one after the other, so none starts late.
	for name, tc := range tests {
		t.Run(name+"/before the edge", func(t *testing.T) {
			checkHeld(h.in(t), apps[name], tc.wantHeld, tc.wantMsg)
		})
	}
	for name, tc := range tests {
		t.Run(name+"/after the edge", func(t *testing.T) {
			checkSynced(h.in(t), apps[name], tc.wantHeld, edge)
		})
	}
}

// checkHeld checks, before the edge, that a held app waits with the
// condition wantMsg and applied nothing; and that an app not held syncs.
func checkHeld(h *harness, app string, wantHeld bool, wantMsg string) {
	h.t.Helper()
	if !wantHeld {
		h.waitApp(app, 10*time.Second, "Synced and Healthy", func(a *v1alpha1.Application) bool { return syncedHealthy(a) && len(a.Status.History) > 0 })
		return
	}
	held := h.waitApp(app, 10*time.Second, "a sync window wait", func(a *v1alpha1.Application) bool {
		return hasCondition(a, ConditionSyncWindowWait)
	})
	if got := conditionMessage(held, ConditionSyncWindowWait); got != wantMsg {
		h.t.Errorf("condition %s = %q, want %q", ConditionSyncWindowWait, got, wantMsg)
	}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: app}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		h.t.Errorf("ConfigMap %s while the window holds the sync: %v, want none", app, err)
	}
}

// checkSynced waits for the app's sync and checks when it started: at the
// edge for a held app (not at a later poll: the clock runs at real
// speed), before it otherwise.
func checkSynced(h *harness, app string, wantHeld bool, edge time.Time) {
	h.t.Helper()
	done := h.waitApp(app, 45*time.Second, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && len(a.Status.History) > 0
	})
	if hasCondition(done, ConditionSyncWindowWait) {
		h.t.Errorf("condition %s left after the sync: %s", ConditionSyncWindowWait, describe(done))
	}
	started := done.Status.History[0].DeployStartedAt.Time
	switch {
	case wantHeld && started.Before(edge):
		h.t.Errorf("sync started at %s, before the window's edge %s", started.Format(time.RFC3339), edge.Format(time.RFC3339))
	case wantHeld && started.After(edge.Add(5*time.Second)):
		h.t.Errorf("sync started at %s, more than 5s after the edge", started.Format(time.RFC3339))
	case !wantHeld && !started.Before(edge):
		h.t.Errorf("sync started at %s; want it at once, before %s", started.Format(time.RFC3339), edge.Format(time.RFC3339))
	}
}

// windowCase is one app of TestSyncWindows, in a project of its own with
// one window.
type windowCase struct {
	window  v1alpha1.SyncWindow
	manual  bool
	wantMsg string
	// wantHeld: the sync waits for the edge; else it runs at once.
	wantHeld bool
}

var windowCases = map[string]windowCase{
	"a deny window holds an automated sync until it closes": {
		window:   v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 3 * * *", Duration: "1h", Applications: []string{"*"}},
		wantHeld: true,
		wantMsg:  "automated sync blocked by sync window deny:0 3 * * *:1h until 2026-01-05T04:00:00Z",
	},
	"an automated sync waits for the allow window to open": {
		window:   v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 4 * * *", Duration: "1h", Namespaces: []string{"*"}},
		wantHeld: true,
		wantMsg:  "automated sync blocked by sync window: outside allow:0 4 * * *:1h until 2026-01-05T04:00:00Z",
	},
	"a manual sync passes a deny window with manualSync": {
		window: v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 3 * * *", Duration: "1h", Applications: []string{"*"}, ManualSync: true},
		manual: true,
	},
	"a manual sync waits for a deny window without manualSync": {
		window:   v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 3 * * *", Duration: "1h", Clusters: []string{"in-cluster"}},
		manual:   true,
		wantHeld: true,
		wantMsg:  "manual sync blocked by sync window deny:0 3 * * *:1h until 2026-01-05T04:00:00Z",
	},
	"a window for other apps does not apply": {
		window: v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 3 * * *", Duration: "1h", Applications: []string{"billing-*"}},
	},
}
