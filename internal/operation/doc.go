// Package operation runs an Application's sync operation: the attempts and
// their retries (retry.go), one sync through internal/sync per attempt
// (run.go), the progress saved after each step so that a new controller
// resumes the sync where the old one stopped (progress.go, state.go), and
// its end: the result, the history entry and the comparison that follows
// in the same write (finish.go). A Registry (registry.go) keeps the runner
// of each app: one at a time per app, at most Options.Processors at once,
// stopped when the app goes, another replica takes it over or a new
// revision supersedes its sync.
//
// The controller decides that an operation runs (internal/controller) and
// starts it with Runner.Run, giving a Host: the narrow part of the
// controller an operation calls back, to compare the app in its final
// write and to be told it ended. Writes go through the controller's status
// writer (internal/appstatus), so the controller's own next patch includes
// them; the runner keeps the app as it last wrote it, so successive saves
// do not wait for the cache.
//
// What the package does not own: planning and running a sync's steps
// (internal/sync), rendering and comparing (internal/compare), deciding
// when an automated sync is due, sync windows and dependencies
// (internal/controller).
package operation
