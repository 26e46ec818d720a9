// Package metrics owns wavecd's Prometheus series: reconciles, syncs and
// the state of each Application (wavecd_app_*, like Argo CD's argocd_app_*),
// Git fetch durations, and notification deliveries and trigger evaluations.
// The controllers update them; internal/server serves them on /metrics.
//
// Labels never hold credentials: a repository URL loses its user
// information first.
//
// What the package does not own: serving HTTP (internal/server), deciding
// what happened (the controllers).
package metrics
