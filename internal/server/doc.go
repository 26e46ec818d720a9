// Package server owns wavecd's HTTP endpoints: the Git webhook
// (POST /api/webhook), Prometheus metrics (/metrics) and the health probes
// (/healthz, /readyz), served by one Server that runs as a controller-runtime
// Runnable.
//
// The webhook verifies GitHub's X-Hub-Signature-256 when Secret argocd-secret
// holds webhook.github.secret, then asks a Refresher to refresh every
// Application whose source uses the pushed repository and revision, with
// Argo CD's matching rules (see match.go). It reaches Applications only
// through two narrow interfaces, AppLister and Refresher: the controller
// implements them in process, and appclient provides versions over the
// Kubernetes API (a refresh is then the argocd.argoproj.io/refresh
// annotation).
//
// Metrics defines the wavecd_* series the controller updates. The package
// renders no manifests and runs no syncs; a UI and an API for the CLI are
// not here yet.
package server
