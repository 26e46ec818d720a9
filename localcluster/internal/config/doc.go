// Package config owns the cluster configuration file that
// `wavecd-localcluster start --config FILE` reads: the simulated node groups
// (count, capacity, labels, taints, annotations) and the CNI mode (the label
// selector of the CNI agent pods that make a node Ready). It parses strictly,
// validates with errors naming the offending field, and builds the same
// configuration from the --nodes shorthand flags.
//
// It does not create anything: the cluster package turns a Config into
// Nodes and KWOK stages.
package config
