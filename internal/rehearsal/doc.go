// Package rehearsal owns local rehearsals of a GitOps bootstrap: the
// actions behind `wavecd up`, `wavecd down` and `wavecd rehearse`, and
// the bootstrap they share. A rehearsal runs in a workspace directory
// (.wavecd/ under the current directory) holding a local cluster, a Git
// snapshot of the repository under test, the controller's Git cache and
// its log.
//
// Up starts or reuses the local cluster (with the profile and time scale
// given; restarted when they change), installs the CRDs, applies the
// settings (package settings: ConfigMaps and Secrets, or an argo-cd Helm
// chart values file; an argocd-notifications-cm gets the notification
// catalog's keys it lacks, and notification settings an earlier run left
// and this one lacks go), renders the whole bootstrap to tell the cluster
// which Services it will hold (services.go), serves the repository
// locally, runs the Application controller in process (with the
// ApplicationSet and notifications controllers), applies the root
// Application and prints a timeline of what happens. With
// ExitWhenSettled it returns once every Application is Synced and Healthy
// with no operation running (PostSync hooks included), or a
// *NotSettledError when the rehearsal stalls or runs out of time; in both
// cases it prints a summary table and leaves the cluster running.
//
// The repository is served without rewriting any manifest: the root
// Application keeps its repoURL, and controller mirrors map that URL (and
// --mirror entries, and argocd-cm's wavecd.mirrors for any other wavecd
// command against the cluster) to the local snapshot, so child
// Applications naming the same URL resolve to it too.
//
// Down stops the local cluster and removes the workspace.
//
// Rehearse (`wavecd rehearse DIR --scenario NAME`) runs one scenario of a
// repository on fresh local clusters, one per run, each in its own folder,
// and stops each cluster when its run ends; each run is judged converged,
// stalled or timed out, and the Report prints as a text summary, JSON, or
// a self-contained HTML page.
//
// The parts live in subpackages, each depending only on those after it:
//
//   - scenario: the scenario files of a repository, drawing a run's values;
//   - snapshot: serving the repository as a local Git repository;
//   - manifest: reading the root manifest, its mirrors and branches;
//   - timeline: watching the cluster, the timeline lines, the settle
//     decision of up and the judge of a rehearse run, node and pod counts;
//   - report: a rehearse run's record and how it prints (text, HTML);
//   - localcluster: starting and stopping wavecd-localcluster.
//
// What the package does not own: reconciling Applications and deciding
// that a sync stalled (internal/controller, internal/sync), the local
// control plane and how its pods, webhooks and APIs behave (localcluster/),
// Git access for the controller (internal/source), reading settings files
// (internal/settings).
package rehearsal
