// Package rehearsal owns local rehearsals of a GitOps bootstrap: `wavecd up`
// and `wavecd down`. A rehearsal runs in a workspace directory (.wavecd/
// under the current directory) holding a local cluster, a Git snapshot of
// the repository under test, the controller's Git cache and its log.
//
// Up starts or reuses the local cluster (wavecd-localcluster, run as a
// subprocess, with the profile and time scale given; restarted when they
// change), installs the CRDs, applies the settings (package settings:
// ConfigMaps and Secrets, or an argo-cd Helm chart values file; an
// argocd-notifications-cm gets the notification catalog's keys it lacks,
// and notification settings an earlier run left and this one lacks go),
// renders the whole bootstrap to tell the cluster which Services it will
// hold (services.go), serves the repository locally, runs the Application
// controller in process (with the ApplicationSet and notifications
// controllers), applies the root Application and prints a timeline of what
// happens: sync and health changes, wave starts, what a wave waits on, pod
// crashes (with the Service a pod needs) and restarts, stamped with the
// seconds since the start and, at a time scale other than 1, the seconds at
// full scale. With ExitWhenSettled it returns once every Application is
// Synced and Healthy with no operation running (PostSync hooks included), or
// a *NotSettledError when the rehearsal stalls or runs out of time; in both
// cases it prints a summary table and leaves the cluster running.
//
// The repository is served without rewriting any manifest: the root
// Application keeps its repoURL, and controller mirrors map that URL (and
// --mirror entries) to the local snapshot, so child Applications naming the
// same URL resolve to it too.
//
// Down stops the local cluster and removes the workspace.
//
// Rehearse (`wavecd rehearse DIR --scenario NAME`) runs one scenario of a
// repository on fresh local clusters, one per run, each in its own folder,
// and stops each cluster when its run ends. A scenario (scenarios/NAME.yaml,
// scenario.go) is a value file of the root Application's Helm chart whose
// rehearsal: key names the settings, the cluster's profile, the files from
// bin/ to add to the served snapshot (Karpenter's CRDs), and values drawn
// from each run's seed. A run is judged (judge.go) converged when every app
// settles, stalled when an app carries the controller's SyncStalled
// condition and nothing changes any more (or nothing changes at all), timed
// out otherwise; the Report (report.go) holds each run's verdict, reason,
// apps and node and pod counts (sampler.go), and prints as a text summary,
// JSON, or a self-contained HTML page with timeline charts (report_html.go;
// chart.go turns a run into the charts internal/diagram draws, as the web UI
// draws a live sync).
//
// What the package does not own: reconciling Applications and deciding that
// a sync stalled (internal/controller, internal/sync), the local control
// plane and how its pods, webhooks and APIs behave (localcluster/), Git
// access for the controller (internal/source), reading settings files
// (internal/settings).
package rehearsal
