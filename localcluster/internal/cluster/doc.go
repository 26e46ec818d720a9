// Package cluster owns the lifecycle of one local Kubernetes control plane in
// a directory: an embedded etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, KWOK and the workloads controller, each a child process of
// the supervisor (the same binary re-executed), plus the simulated nodes of
// the configured node groups (package config), each with its own InternalIP.
//
// The directory holds everything that survives a restart: etcd data, the
// PKI (CA, serving certificate, service-account key, admin token), the
// ports last used, and the admin kubeconfig. A supervisor writes state.json
// when the cluster is usable; stop and status read it. Children are started
// with a parent-death signal, so a killed supervisor leaves nothing behind.
// Each start writes processes.json, the process definitions the workloads
// controller runs process-backed pods from (their working directories go
// under processes/, their logs under logs/), and releases the node leases
// of the previous run so that the new KWOK manages the nodes at once.
//
// It does not own what runs on the cluster: workloads, GitOps and tests are
// the callers' business.
package cluster
