// Package stages owns the KWOK stage configuration that gives simulated
// nodes their lifecycle: nodes turn Ready and keep a heartbeat. Pods are
// not KWOK's: the workloads controller runs them as a kubelet would.
//
// In CNI mode (Options.CNI) nodes register NotReady with the kubelet's
// "cni plugin not initialized" message and turn Ready only once they carry
// the annotation localcluster.wavecd.io/cni-ready: "true", which the
// workloads controller sets when a CNI agent pod runs on them.
//
// A node the cluster did not create (a provisioner's, such as Karpenter's,
// without the localcluster.wavecd.io/node-group label) reports its first
// status only after Options.NodeStartup, as an instance takes to boot.
package stages
