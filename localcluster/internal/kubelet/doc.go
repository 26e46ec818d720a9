// Package kubelet owns what a kubelet would show for a simulated pod: the
// course of each container from the pod's own spec, and the pod and
// container statuses that show it.
//
// Init containers run one after the other; one whose command names a
// Service without a ready endpoint (package deps) keeps running, as a
// wait loop does, and holds the pod in Init until the Service is ready.
// Sidecars (init containers with restartPolicy Always) start and stay.
// Main containers start after a short creation delay, then:
//
//   - Started and Ready follow the startupProbe, then the readinessProbe,
//     as the kubelet's probe workers run them: a probe runs every
//     periodSeconds from when the pod was admitted, is skipped before
//     initialDelaySeconds have passed since the container started, and a
//     readiness probe also runs at once when the container starts or
//     turns Started; successThreshold successes in a row make the
//     container Ready. A container without a probe is Ready once started.
//     Probes succeed once the container answers them: ReadyAfter after its
//     start (0 unless the profile says otherwise); a startup or liveness
//     probe that fails failureThreshold times before that kills the
//     container.
//   - A container whose Services (named in its spec, the requires
//     annotation or the profile) have no ready endpoint when it starts
//     runs one second, exits 1 naming them, and is restarted with the
//     kubelet's back-off (10 s doubling to 300 s): CrashLoopBackOff,
//     restartCount, lastState. A start that finds them ready keeps going.
//   - A run-to-completion pod (restartPolicy Never or OnFailure) exits
//     after its run time (1 s) with its exit code (0); the pod ends
//     Succeeded or Failed, or OnFailure restarts a failed container.
//
// The annotations of the earlier KWOK stages stay as overrides:
// pod-ready.stage.kwok.x-k8s.io/delay (and jitter-delay) starts the
// containers Ready at once after that delay, pod-complete.stage...delay is
// the run time, localcluster.wavecd.io/exit-code the exit code,
// localcluster.wavecd.io/backoff the back-off's base, and
// pod-delete.stage...delay the time a deleted pod takes to go. Every
// duration, those of the spec's probes included, is multiplied by the
// cluster's time scale.
//
// The package is pure: Plan takes a pod, its settings, what is known of
// its containers' exact times (Memo) and which Services are unmet, and
// returns the status to write and when to look again. Reading the
// cluster and writing statuses is package workloads' business.
package kubelet
