package controller

import (
	"context"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
)

// A new revision unsticks a sync: while an automated sync runs (or waits
// to retry), a refresh that finds a new target revision asks it to stop at
// its next safe point (internal/sync's Stop); the operation ends Failed,
// saying so, with a history entry of its own, and automated sync starts a
// new one on the new revision. wavecd does this by default; Argo CD parity
// leaves a running sync alone, as Argo CD does, and honours only
// retry.refresh (a retry renders the latest revision).

// supersedes reports whether app's running operation is an automated sync
// of a revision (syncing: the one its current attempt renders, else the
// operation's) other than the one the last comparison of its current spec
// found, and that stops it (never in Argo CD parity).
func (sr *starter) supersedes(app *v1alpha1.Application, syncing string) bool {
	if sr.argoParity || app.Operation == nil || !app.Operation.InitiatedBy.Automated || app.Operation.Sync == nil {
		return false
	}
	st := app.Status.Sync
	if syncing == "" {
		syncing = app.Operation.Sync.Revision
	}
	if !sameSpec(st.ComparedTo, app) {
		return false
	}
	// An automated sync of several sources names no revision (it syncs
	// what each source's targetRevision resolves to): it is not
	// superseded.
	return !app.Spec.HasMultipleSources() && st.Revision != "" && syncing != "" && st.Revision != syncing
}

// supersedeIfNewRevision asks app's running sync to stop when a new
// revision supersedes it.
func (sr *starter) supersedeIfNewRevision(ctx context.Context, app *v1alpha1.Application) {
	if !sr.supersedes(app, sr.runs.Revision(sr.key(app))) {
		return
	}
	if sr.runs.Supersede(sr.key(app)) {
		logctx.From(ctx).Info("a new revision supersedes the running sync; it stops at its next safe point",
			"running", sr.runs.Revision(sr.key(app)), "new", app.Status.Sync.Revision)
	}
}
