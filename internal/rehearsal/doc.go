// Package rehearsal owns local rehearsals of a GitOps bootstrap: `wavecd up`
// and `wavecd down`. A rehearsal runs in a workspace directory (.wavecd/
// under the current directory) holding a local cluster, a Git snapshot of
// the repository under test, the controller's Git cache and its log.
//
// Up starts or reuses the local cluster (wavecd-localcluster, run as a
// subprocess), installs the CRDs, applies the settings ConfigMap, serves
// the repository locally, runs the Application controller in process,
// applies the root Application and prints a timeline of what happens: sync
// and health changes, wave starts, what a wave waits on, pod crashes and
// restarts. With ExitWhenSettled it returns once every Application is
// Synced and Healthy with no operation running (PostSync hooks included),
// or a *NotSettledError when the rehearsal stalls or runs out of time; in
// both cases it prints a summary table and leaves the cluster running.
//
// The repository is served without rewriting any manifest: the root
// Application keeps its repoURL, and controller mirrors map that URL (and
// --mirror entries) to the local snapshot, so child Applications naming the
// same URL resolve to it too.
//
// Down stops the local cluster and removes the workspace.
//
// What the package does not own: reconciling Applications
// (internal/controller), the local control plane itself (localcluster/),
// Git access for the controller (internal/source).
package rehearsal
