// Package controller owns the Application reconciler: it reads Applications
// in the controller's namespace (and, as Argo CD's apps in any namespace,
// in those Options.ApplicationNamespaces match, when their project's
// sourceNamespaces permit it), renders their sources, compares the result
// with the live objects, writes the status Argo CD users know (sync, health,
// resources, sourceType, images, conditions, operationState, history), runs
// sync operations (manual ones from the `operation` field, rollbacks, and
// automated ones) through the sync engine, and deletes an app's objects when
// its resources finalizer asks for it.
//
// Reconcile does bookkeeping (get, finalizer, project, dependencies, refresh
// decision) into one pending patch of the app (internal/appstatus), which
// reconcileApp writes once at the end, whatever path the decision took,
// before it starts the sync runner it asked for. Comparing is
// internal/compare's (the controller keeps one Comparer, and writes its
// result into the status in status.go), destinations are
// internal/destination's, and running a sync operation is
// internal/operation's: the controller decides that one runs (operation.go:
// an automated sync due, a sync window or dependency holding it) and
// starts it with operation.Runner, giving it a narrow Host (the comparison
// in the final write, the reconcile after its end). A sync runs outside
// the reconcile worker, in a runner per app, and saves in
// status.operationState, through the same writer, what a new controller
// (after a crash, or a new leader) needs to resume it where the old one
// stopped.
//
// Writes are few, because each one costs the API server and every watcher
// an event: a reconcile writes once (a refresh's status, the refresh
// request it answers and the automated sync it triggers go in one patch);
// a sync's end writes its result together with the comparison that
// follows it, made against the objects as the sync wrote them (the live
// cache may lag); a refresh nobody asked for that changes nothing but
// status.reconciledAt is not written while that is under 10 minutes old;
// an app whose sync runs is compared on events at most every 5 seconds.
// Once the controller is idle, the heap a burst of work left free goes
// back to the operating system (memory.go).
//
// Every write that lands also records Kubernetes Events on the app, as Argo
// CD does (recorder.go): OperationStarted for an automated sync requested
// or a sync a user asked for starting, OperationCompleted (a Warning when
// it failed), ResourceUpdated for a new sync or health status; and, beyond
// Argo CD, one per condition that appears (SyncStalled, ComparisonError,
// DependencyWait, ...), so `kubectl describe application` tells why an
// app waits. Events go out through client-go's correlator, in the
// background: recording never delays a sync.
//
// The controller's state of an app (refresh marks, runners, comparison
// times, readiness gates, shards) is keyed by its instance name
// (application.Namespaces): its name in the control namespace,
// `<namespace>_<name>` elsewhere, which is also what its objects' tracking
// names, so a watch event of an object leads straight to its app.
//
// Fields Argo CD honours that wavecd does not implement
// (render.UnsupportedFields) set an UnsupportedFieldWarning condition.
// Plugins come from Options.PluginsDir, kustomize build options from
// argocd-cm (settings.go).
//
// Destinations (internal/destination): a destination that names no
// registered cluster is an InvalidSpecError; the project's destination
// rules see the resolved server and name; an app whose cluster is gone is
// deleted without its objects, as in Argo CD. A change to a cluster Secret
// drops its target and reconciles the apps that name it (targets.go).
//
// Sync windows (windows.go, rules in internal/syncwindow): before an
// automated sync is requested, and before a manual one starts, the
// project's windows are checked; a held sync gets the SyncWindowWait
// condition saying until when, and the app is requeued for that instant.
//
// A running sync whose wave is stalled (see internal/sync) carries the
// SyncStalled condition with the operation's message (internal/operation);
// the sync engine learns where the node provisioners are from
// internal/provisioner.
// The stall timeout is argocd-cm's wavecd.stall.timeout, or
// Options.StallTimeout.
//
// A new revision unsticks a sync (supersede.go): when a refresh finds a new
// target revision while an automated sync of an older one runs or waits to
// retry, the sync is asked to stop at its next safe point (internal/sync);
// it ends Failed saying where it stopped, gets a history entry, and
// automated sync starts one on the new revision. Argo CD parity leaves the
// running sync alone. Both honour Argo CD's retry.refresh: a retry syncs
// the latest revision.
//
// Readiness gates (gates.go): an app whose health waits on the Services
// its webhooks and APIServices call is refreshed when their EndpointSlices
// change.
//
// Deleting an app runs, as Argo CD does, one step per finalizer
// (finalize.go, deletehooks.go): its PreDelete hooks from Git (once each;
// a failed one is deleted and reported as DeletionError), then its objects
// (resources finalizer; internal/teardown orders them: reverse waves, each
// step gone before the next, or Argo CD's order with ArgoParity; the
// DeletionWait and DeletionStalled conditions say what a step waits on),
// then its PostDelete hooks, then the cleanup of
// both by their delete policies. A comparison adds the
// pre-delete-finalizer.argocd.argoproj.io and post-delete-... finalizers
// (and their /cleanup stages) while Git holds hooks of that type, and
// removes them when it no longer does. Live hooks are listed in
// status.resources with hook: true and no sync status or health of their
// own: they never make an app OutOfSync.
//
// With leader election one replica reconciles; every replica serves HTTP.
// With Options.Sharding every replica reconciles the apps internal/shard
// gives it (shards.go): a reconcile of another replica's app returns at
// once, an app given away has its running sync stopped (and waited for)
// before the replica says so, and an app taken up is queued; its sync
// resumes from the saved state. Status writes then carry the replica's
// field manager. The leader alone runs the ApplicationSet and
// notifications controllers.
// The controller offers what an HTTP server needs, as concrete types that
// internal/cli hands to internal/server: Refresher (in memory on the
// leader, the refresh annotation elsewhere), Lister, Ready, and it updates
// Options.Metrics (reconciles, syncs, app state, Git fetches). It imports
// no HTTP package.
//
// The Reconciler (reconcile.go, status.go, periodic.go, recorder.go,
// shards.go, controller.go) is the reconcile loop itself; it hands three
// jobs to types of their own, each given only what it needs: a router
// (router.go, watches.go, gates.go, targets.go) turns watch events into
// the apps to reconcile, a starter (operation.go, autosync.go, windows.go,
// supersede.go, request.go) decides whether an app's operation runs now
// and starts its runner, and a finalizer (finalize.go, deletehooks.go)
// deletes an app in its finalizers' order.
//
// What the package does not own: running a sync operation
// (internal/operation), comparing (internal/compare), rendering
// (internal/render), ordering and applying (internal/sync), health rules
// (internal/health), HTTP endpoints (internal/server), metrics
// (internal/metrics).
package controller
