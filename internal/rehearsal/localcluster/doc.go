// Package localcluster drives a local cluster for a rehearsal: the
// wavecd-localcluster binary (built from the separate module localcluster/)
// run as a subprocess through its command line, in a directory of its own.
// Find locates the binary ($WAVECD_LOCALCLUSTER, next to the running
// executable, or on PATH); a Cluster starts (detached, from a profile or
// with plain nodes, at a time scale), reports its status, stops (waiting
// until none of its processes is left), is reused when it runs with the
// same start options and restarted when they changed (EnsureRunning), and
// hands out its admin kubeconfig.
//
// What the package does not own: the control plane itself and how its
// nodes, pods, webhooks and APIs behave (localcluster/), what a rehearsal
// puts into the cluster (internal/rehearsal), the clusters tests run
// against (internal/testenv).
package localcluster
