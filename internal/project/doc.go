// Package project owns what an Argo CD AppProject permits, with Argo CD's
// rules: the source repositories an app may use (sourceRepos, compared
// normalized, `*` not crossing a '/' but `**` doing so), the destinations
// it may deploy to (server or name, and namespace), where a pattern with a
// leading `!` denies what it matches whatever else allows it, the kinds
// of objects it may deploy (the cluster- and namespace-resource lists,
// file-name patterns without `!`), and the orphaned objects a project
// ignores.
//
// The package is pure: reading the project, and creating the default one,
// are the controller's. Sync windows are internal/syncwindow's.
package project
