// Package appstatus owns writing an Application as its controller does:
// a pending patch per piece of work, written once.
//
// A reconcile begins a Patch from the app it read and changes Patch.App
// (status, finalizers, the refresh annotation, a requested automated
// operation) as it decides; Flush writes the change as one merge patch
// from the app as read, or nothing when nothing changed (or, for a refresh
// nobody asked for, when only the comparison timestamps moved and the
// written ones are recent: Patch.Quiet). A change that answers a refresh
// request (removes the annotation) is written over the app as read only:
// a refresh asked for again meanwhile keeps its annotation. The sync
// runner, which runs outside a reconcile, writes its progress and its end
// through Update: read the app, change it, flush.
//
// Merge patches are computed against the copy the controller read, so a
// copy older than the controller's own last write would let a patch skip
// a field the controller changed back: Writer remembers the
// resourceVersion of its newest write to each app. ReadCurrent says
// whether the cache's copy includes that write (a reconcile waits for the
// watch event when it does not); UpdateFrom starts from the cache's copy,
// or the writer's own last write, or else reads the API server. Each write that lands is told to the Writer's owner, with the
// app before and after it (the controller records its Events).
//
// An app's status lists each managed object twice (status.resources and
// the sync result), which for the root of thousands of children is more
// than etcd stores in one object: Flush first fits the app within
// StatusBudget (Fit), listing the objects that need attention and one of
// each kind, and says so in the StatusTruncatedWarning condition.
//
// What the package does not own: what the status says (internal/controller
// decides, internal/compare compares), Events (internal/controller).
package appstatus
