// Package e2e installs wavecd on the local cluster the way users do, and
// runs the real binary: the Helm chart (with the Helm SDK) and the
// Kustomize base (built with krusty, applied server-side) each in a
// namespace of their own, with pods annotated
// localcluster.wavecd.io/process: wavecd so that the local cluster runs
// bin/wavecd, built from the current source, as a host process with the
// pod's ServiceAccount token, namespace and arguments.
//
// The tests prove what only a real install shows: the controller runs as
// its ServiceAccount and the chart's RBAC lets it sync the seed demo
// (examples/healthcheck-poc) while a missing rule shows as Forbidden; two
// replicas fail over when the leader's process is killed mid-sync, and the
// new leader finishes the sync without running a hook twice; and a
// controller managing its own install (examples/self-managed) applies a
// health check committed to Git without a restart.
//
// The package has no code of its own; its tests start one cluster for the
// package (internal/testenv) and check, once it has stopped, that no host
// process outlived it. The chart's pure tests live in package deploy and
// need no cluster.
package e2e
