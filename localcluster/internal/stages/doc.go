// Package stages owns the KWOK stage configuration that gives simulated nodes
// and pods their lifecycle: nodes turn Ready and keep a heartbeat; pods are
// created, initialised, become Ready, complete (Job and run-to-completion
// pods) and are deleted. Every pod step honours KWOK's per-pod delay
// annotations, so a manifest can make a workload slow to start:
//
//	pod-create.stage.kwok.x-k8s.io/delay: "2s"
//	pod-ready.stage.kwok.x-k8s.io/delay: "10s"
//	pod-ready.stage.kwok.x-k8s.io/jitter-delay: "5s"
//	pod-complete.stage.kwok.x-k8s.io/delay: "3s"
//	pod-delete.stage.kwok.x-k8s.io/delay: "1s"
//
// A run-to-completion pod (owned by a Job, or with restartPolicy Never or
// OnFailure) ends Succeeded, or Failed when it carries the annotation
// localcluster.wavecd.io/exit-code with a non-zero value.
//
// Pods annotated localcluster.wavecd.io/requires are not started by KWOK:
// once initialised they belong to the workloads controller (package
// workloads), which crash-loops them while a required Service has no ready
// endpoint. No stage matches a Running pod that is not Ready, so the stages
// never fight that controller.
//
// Pods annotated localcluster.wavecd.io/process are left to the workloads
// controller from the same point, and for good: KWOK neither starts,
// completes nor removes them. The controller runs their host process and
// removes a deleted pod once that process has stopped, as a kubelet does.
//
// In CNI mode (Options.CNI) nodes register NotReady with the kubelet's
// "cni plugin not initialized" message and turn Ready only once they carry
// the annotation localcluster.wavecd.io/cni-ready: "true", which the
// workloads controller sets when a CNI agent pod runs on them.
//
// The defaults are shorter than a real kubelet's so tests run fast: a pod is
// created at once, Ready after 1 s, and removed at once when deleted.
package stages
