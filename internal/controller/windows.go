package controller

import (
	"fmt"
	"time"

	"github.com/wavecd/wavecd/internal/syncwindow"
)

// ConditionSyncWindowWait is wavecd's condition for a sync that an
// AppProject's sync windows hold back; its message says which windows and
// until when ("automated sync blocked by sync window deny:0 22 * * *:1h
// until 2026-01-05T23:00:00Z"). Argo CD shows the same state in its UI
// only.
const ConditionSyncWindowWait = "SyncWindowWait"

// windowWait checks the project's sync windows for a sync of the app
// starting now. It returns "" when the sync may start; otherwise the
// message for ConditionSyncWindowWait and how long until the windows let
// it start (0 when that is more than a year away). Windows that do not
// parse block every sync, as in Argo CD, until the project is fixed.
func (sr *starter) windowWait(req opRequest, manual bool) (time.Duration, string) {
	specs := req.proj.Spec.SyncWindows
	if len(specs) == 0 {
		return 0, ""
	}
	windows, err := syncwindow.ParseAll(specs)
	if err != nil {
		return 0, fmt.Sprintf("sync blocked: project %s has invalid sync windows: %v", req.proj.Name, err)
	}
	now := sr.now()
	d := syncwindow.Evaluate(windows, syncwindow.Target{
		App: req.app.Name, Namespace: req.app.Spec.Destination.Namespace, Server: req.dest.Server, Cluster: req.dest.Name,
	}, now, manual)
	if d.Allowed {
		return 0, ""
	}
	var wait time.Duration
	if !d.Until.IsZero() {
		wait = max(d.Until.Sub(now), time.Millisecond)
	}
	return wait, d.Message(manual)
}
