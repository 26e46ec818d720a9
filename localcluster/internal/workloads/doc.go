// Package workloads owns the simulated kubelet and what else a real
// cluster's nodes and cloud would do, as controllers run in their own child
// process (`__component workloads`):
//
//   - Pods: every pod scheduled to a simulated node (annotated
//     kwok.x-k8s.io/node: fake) is admitted (its IP, host-network pods
//     their node's), run as package kubelet plans it from its own spec
//     (probes, the Services its command, args and env name, Job run
//     times, the restart back-off) and removed once deleted. The Services
//     a container may need are those that exist and those listed in the
//     ConfigMap kube-system/localcluster-expected-services (key
//     "services", one namespace/name a line), which a rehearsal fills
//     with the Services of the whole bootstrap, so a client of a Service
//     that a later wave creates crash-loops too; a Service selecting the
//     pod itself never counts. Pods waiting on a Service are looked at
//     again when it or its EndpointSlices change.
//   - The profile (package config): workload overrides by namespace,
//     name and selector (ready after, requires, run time, exit code), the
//     time scale every delay is multiplied by, and an ingress controller
//     that gives LoadBalancer Services and the Ingresses of its classes an
//     address after a delay.
//   - The API server's egress: webhooks and APIServices backed by a
//     Service are answered while a Ready pod backs it (package network).
//   - CNI mode: when a CNI agent selector is set, a node gets the annotation
//     localcluster.wavecd.io/cni-ready: "true" once a pod matching the
//     selector runs on it; the KWOK node stages then make the node Ready.
//   - Process-backed pods, below.
//
// # Process-backed pods
//
// A pod annotated localcluster.wavecd.io/process: NAME, or whose first
// container runs an image of the definition NAME (its images), is backed
// by a real process on this machine, run from the definition NAME (package
// config: built-in karpenter and wavecd, the config file's processes,
// --process). The pod controller admits and initialises it; the process
// starts once the pod's node is Ready, and runs until the pod is deleted
// or ends, or the cluster stops. It is the leader of its own process
// group: a stop sends SIGTERM to the group and SIGKILL once the grace
// period is over (the pod's, or 5 s when the cluster stops); when the
// leader ends, whatever it left in its group is killed, as a container's
// processes go with it; a parent-death signal kills the leader if the
// workloads controller dies.
//
// The process gets what in-cluster configuration gives a pod. KUBECONFIG
// names a kubeconfig for the API server on 127.0.0.1 (cluster CA) whose
// token file holds a token of the pod's ServiceAccount bound to the pod,
// renewed after 48 of its 60 minutes. The command line is the definition's
// command (replacing the container's), then the first container's args,
// then the definition's args, so that a definition's flag wins. The
// environment, each layer over the one before: PATH, HOME and TMPDIR of the
// controller; POD_NAME and POD_NAMESPACE; the container's envFrom and env
// (values, fieldRef, resourceFieldRef, ConfigMap and Secret references);
// the definition's env; KUBECONFIG and the definition's free ports (a free
// 127.0.0.1 port per variable at each start). $(VAR) expands in env values
// and args as in a pod spec. The process runs in the pod's directory,
// <cluster>/processes/<namespace>_<pod>/ (kubeconfig, token, CA), and its
// output is appended to <cluster>/logs/process-<namespace>_<pod>.log.
//
// The pod mirrors the process as a kubelet mirrors a container: Running
// and Ready while it runs (other containers of the pod mirror it too),
// container ID process://<pid>. An exit shows as a terminated container
// with the exit code (128+n for signal n; StartError, 128, for a command
// that cannot run); restartPolicy Always, and OnFailure after a failure,
// restart it with the kubelet's CrashLoopBackOff back-off, otherwise the
// pod ends Succeeded or Failed. A pod whose process has no definition, or
// whose env refers to what does not exist, waits with
// CreateContainerConfigError. A deleted pod stays Terminating until its
// process has stopped, then the controller removes it. A pod found Running
// without a process (the cluster or the controller restarted) is started
// again and counts a restart. Probes are not run, and the pod IP does not
// reach the process: Services cannot route to it.
//
// The controllers read pods, Services, EndpointSlices, Nodes, Ingresses,
// ConfigMaps and Secrets, request ServiceAccount tokens, and write pod
// status, Service and Ingress status, node annotations and events, and
// delete the pods that are gone. Nodes are KWOK's (package stages).
package workloads
