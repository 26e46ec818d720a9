// Package config owns the cluster configuration file that
// `wavecd-localcluster start --config FILE` reads, a rehearsal's profile:
// the simulated node groups (count, capacity, labels, taints, annotations,
// Ready without a CNI agent), the CNI mode (the label selector of the CNI
// agent pods that make a node Ready), the process definitions behind
// process-backed pods (and the images that select them), the start-up time
// of nodes a provisioner makes, per-workload overrides (ready after,
// requires, run time, exit code, by namespace, name and selector) and an
// ingress controller that gives addresses; the time scale comes from
// --time-scale. It parses strictly, validates with errors naming the
// offending field, and builds the same configuration from the --nodes
// shorthand flags.
//
// Process definitions come in layers, each laid over the one before, name
// by name: the built-ins (karpenter and wavecd), the file's processes, then
// the --process NAME=COMMAND flags.
//
// It does not create anything: the cluster package turns a Config into
// Nodes and KWOK stages, the workloads package runs the pods, the
// processes and the ingress controller.
package config
