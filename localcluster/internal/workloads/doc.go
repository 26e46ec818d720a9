// Package workloads owns the simulated kubelet behaviour that KWOK's stages
// cannot express, as a controller run in its own child process
// (`__component workloads`):
//
//   - Required services: a pod annotated
//     localcluster.wavecd.io/requires: "<service>.<namespace>:<port>[,...]"
//     starts, and while one of those Services has no ready endpoint for that
//     port its containers fail (exit code 1) and are restarted with the
//     kubelet's growing back-off (10 s doubling to 300 s, or the base set by
//     localcluster.wavecd.io/backoff), showing CrashLoopBackOff, restart
//     counts and the last termination as a kubelet does. Once every Service
//     has a ready endpoint, the next start keeps running and turns Ready.
//   - CNI mode: when a CNI agent selector is set, a node gets the annotation
//     localcluster.wavecd.io/cni-ready: "true" once a pod matching the
//     selector runs on it; the KWOK node stages then make the node Ready.
//
// The controller only reads pods, Services, EndpointSlices and Nodes and
// writes pod status, node annotations and events. Which pods KWOK leaves to
// it is decided in package stages.
package workloads
