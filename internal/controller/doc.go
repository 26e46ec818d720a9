// Package controller owns the Application reconciler: it reads Applications
// in the controller's namespace, renders their sources, compares the result
// with the live objects, writes the status Argo CD users know (sync, health,
// resources, sourceType, images, conditions, operationState, history), runs
// sync operations (manual ones from the `operation` field, rollbacks, and
// automated ones) through the sync engine, and deletes an app's objects when
// its resources finalizer asks for it.
//
// Reconcile does bookkeeping (get, finalizer, project, dependencies, refresh
// decision, deferred status patch); comparing (compare.go, render.go) and
// syncing (runner.go, operation.go) live in their own files. A sync runs
// outside the reconcile worker, in a runner per app, and saves its progress
// in status.operationState after every step, so a new controller (after a
// crash, or a new leader) resumes a sync where the old one stopped.
//
// With leader election one replica reconciles; every replica serves HTTP.
// The controller gives internal/server what it needs: Refresher (in memory
// on the leader, the refresh annotation elsewhere), Lister, Ready, and
// Options.Metrics, which the reconciler updates (reconciles, syncs, app
// state, Git fetches). Diff runs a refresh's comparison once, outside any
// controller, for `wavecd app diff`.
//
// What the package does not own: rendering (internal/render), ordering and
// applying (internal/sync), health rules (internal/health), HTTP endpoints
// (internal/server).
package controller
