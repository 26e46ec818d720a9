// Package snapshot owns serving the repository under test to a
// rehearsal's controller as a local Git repository, without rewriting any
// manifest. Write commits the files of a folder into a new bare repository
// (skipping .git folders, what .gitignore files exclude and the workspace;
// symlinks and the executable bit kept; a fixed commit time, so the same
// files give the same commit), on branch main and the branches the root
// Applications target, with extra files from elsewhere (Karpenter's CRDs
// for a scenario). Serve decides how --repo is served: a folder as a
// snapshot, a Git working tree in place (its committed files), a URL as a
// clone; and reads the root manifest from what it serves.
//
// What the package does not own: mapping repository URLs to the served
// repository (the controller's mirrors, internal/source), reading the root
// manifest (internal/rehearsal/manifest), fetching for the controller
// (internal/source).
package snapshot
