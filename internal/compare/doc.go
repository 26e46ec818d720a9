// Package compare owns comparing an Application with its destination, the
// way Argo CD's refresh does: render its sources at resolved revisions
// (render.go), list its live objects through its tracking (live.go),
// predict with a dry run what an apply would store (a server-side diff,
// or Argo CD's client-side three-way merge with the compare option
// ServerSideDiff=false), diff the two with ignoreDifferences applied, and
// sum the result up as Argo CD shows it (status.go): each resource's sync
// status, health and wave, the app's sync status and health, revisions,
// source types, images, and the live hooks, listed but never compared.
//
// A cached live copy that disagrees with Git is read again from the API
// server before it counts as drift, so a cache that has not seen the
// latest write yet never reports it; after a sync, the objects as the sync
// wrote them stand in for cached copies older than them. On a live object
// no longer in Git, the compare option IgnoreExtraneous keeps it from
// making its app OutOfSync.
//
// The controller keeps one Comparer for its lifetime (its live caches and
// predictions live in internal/destination); Differ compares one app
// outside any controller, for `wavecd app diff` and the API server's
// managed-resources and diff views, and writes nothing.
//
// What the package does not own: how a comparison is written to the app's
// status and when an app is compared (internal/controller), rendering one
// source (internal/render), normalizing and diffing one object
// (internal/diff), health rules (internal/health), syncing (internal/sync).
package compare
