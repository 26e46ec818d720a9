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
//   - Process-backed pods, below.
//
// # Process-backed pods
//
// A pod annotated localcluster.wavecd.io/process: NAME is backed by a real
// process on this machine, run from the definition NAME (package config:
// built-in karpenter and wavecd, the config file's processes, --process).
// The process starts once KWOK has initialised the pod and the pod's node
// is Ready, and runs until the pod is deleted or ends, or the cluster
// stops. It is the leader of its own process group: a stop sends SIGTERM to
// the group and SIGKILL once the grace period is over (the pod's, or 5 s
// when the cluster stops); when the leader ends, whatever it left in its
// group is killed, as a container's processes go with it; a parent-death
// signal kills the leader if the workloads controller dies.
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
// restart it with the CrashLoopBackOff back-off of required services,
// otherwise the pod ends Succeeded or Failed. A pod whose process has no
// definition, or whose env refers to what does not exist, waits with
// CreateContainerConfigError. A deleted pod stays Terminating until its
// process has stopped, then the controller removes it; KWOK leaves these
// pods alone from their initialisation on. A pod found Running without a
// process (the cluster or the controller restarted) is started again and
// counts a restart. Probes are not run, and the pod IP does not reach the
// process: Services cannot route to it.
//
// The controller only reads pods, Services, EndpointSlices, Nodes,
// ConfigMaps and Secrets, requests ServiceAccount tokens, and writes pod
// status, node annotations, events, and deletes process-backed pods whose
// process has stopped. Which pods KWOK leaves to it is decided in package
// stages.
package workloads
