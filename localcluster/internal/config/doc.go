// Package config owns the cluster configuration file that
// `wavecd-localcluster start --config FILE` reads: the simulated node groups
// (count, capacity, labels, taints, annotations), the CNI mode (the label
// selector of the CNI agent pods that make a node Ready) and the process
// definitions behind process-backed pods. It parses strictly, validates with
// errors naming the offending field, and builds the same configuration from
// the --nodes shorthand flags.
//
// Process definitions come in layers, each laid over the one before, name
// by name: the built-ins (karpenter and wavecd), the file's processes, then
// the --process NAME=COMMAND flags.
//
// It does not create anything: the cluster package turns a Config into
// Nodes and KWOK stages, the workloads package runs the processes.
package config
