// Package source owns where manifests come from: Git repositories fetched
// with go-git into an on-disk cache keyed by URL, revision resolution
// (branch, tag, full or short SHA, HEAD), read-only trees per commit SHA,
// plain local folders, offline mirrors, repository credentials, and path
// safety.
//
// A Tree is the only way renderers read repository files. It never follows a
// symlink out of the repository and it refuses any path that leaves the root
// through "..", an absolute path or a symlink; such a refusal is a
// *PathError naming the path. Trees are immutable and safe for concurrent
// use, so one Tree per commit is shared by every app and every refresh.
//
// The package does not render anything (see internal/render) and does not
// talk to Kubernetes: credentials arrive as already-read Secrets.
package source
