// Package destination owns the clusters apps deploy to, as the controller
// reaches them. An app's destination.server or destination.name resolves
// through the registered clusters (internal/cluster, the cluster Secrets
// of the controller's namespace) to a Target: its clients, a live cache
// whose informers watch the kinds apps manage there, what dry runs
// predicted there, and the capabilities Helm sees: the server version as
// a semantic version and every API version it serves, discovered again
// when a CustomResourceDefinition changes (capabilities.go), as Argo CD
// hands them to Helm.
//
// The in-cluster destination is the local target, built from the
// controller's own configuration; every other cluster gets a target of its
// own on first use, dropped when its Secret goes or its credentials change
// (Targets.Prune). A destination that names no registered cluster is a
// *Error: the app's spec is invalid until the cluster is registered. An
// owner that watches the cluster Secrets and prunes on each change
// (Targets.FollowClusters) has every app resolved from one listing of
// them until the next change.
//
// Predictions (predictions.go) are dry-run applies at a destination,
// reused while neither the desired object nor the live one changed, so a
// periodic refresh of an unchanged app costs no dry run; a sync's applies
// seed them, and a sync reads them back as the dry runs that cannot fail.
//
// What the package does not own: the project rules a destination must
// pass (internal/controller), comparing (internal/compare), syncing
// (internal/sync).
package destination
