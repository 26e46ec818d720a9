// Package manifest owns a rehearsal's root manifest: the file of one or
// more Applications (and other objects of the controller's namespace,
// such as AppProjects) that a rehearsal applies first. ReadRoot reads it,
// each object with apiVersion, kind and a name, in the controller's
// namespace; Apps and Names list its Applications; Mirrors maps the Git
// repositories they name to the repository a rehearsal serves, and
// Branches lists the branches they target, for a snapshot to offer.
//
// What the package does not own: the objects the root Applications make
// (rendered by internal/render), serving the repository
// (internal/rehearsal/snapshot), applying the root (internal/rehearsal).
package manifest
