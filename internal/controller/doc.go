// Package controller owns the Application reconciler: it reads Applications
// in the controller's namespace, renders their sources, compares the result
// with the live objects, writes the status Argo CD users know (sync, health,
// resources, conditions, operationState, history), runs sync operations
// (manual ones from the `operation` field and automated ones) through the
// sync engine, and deletes an app's objects when its resources finalizer
// asks for it.
//
// Reconcile does bookkeeping (get, finalizer, project, dependencies, refresh
// decision, deferred status patch); comparing and syncing live in their own
// files. A sync runs outside the reconcile worker, in a runner per app, and
// saves its progress in status.operationState after every step, so a new
// controller resumes a sync where the old one stopped.
//
// What the package does not own: rendering (internal/render), ordering and
// applying (internal/sync), health rules (internal/health), HTTP endpoints
// (internal/server).
package controller
