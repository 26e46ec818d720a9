package timeline

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// observePod reports a pod's crashes, its recovery, a failure and why it
// cannot be scheduled; pods of no app are tracked silently.
func (t *Tracker) observePod(o Observation) []string {
	key := o.pod.Namespace + "/" + o.pod.Name
	p, ok := t.pods[key]
	if !ok {
		p = &podTrack{namespace: o.pod.Namespace, name: o.pod.Name}
		t.pods[key] = p
	}
	if o.deleted {
		return nil // its restarts still count for its app
	}
	p.owner = ownerOf(o.pod)
	var out []string
	restarts, crash, waiting := restartsOf(o.pod)
	if restarts > p.restarts {
		out = append(out, crashLine(crash, waiting, restarts))
	}
	ready := PodReady(o.pod)
	if ready && !p.ready && restarts > 0 {
		out = append(out, fmt.Sprintf("ready after %s", plural(int(restarts), "restart")))
	}
	pending := Unschedulable(o.pod)
	if pending != "" && pending != p.pending {
		out = append(out, "unschedulable: "+pending)
	}
	failed := o.pod.Status.Phase == corev1.PodFailed
	if failed && !p.failed {
		out = append(out, "failed: "+orDash(strings.TrimSpace(o.pod.Status.Reason+" "+o.pod.Status.Message)))
	}
	p.restarts, p.ready, p.pending, p.failed = max(restarts, p.restarts), ready, pending, failed
	if len(out) == 0 || o.initial || t.appOfPod(p) == nil {
		return nil
	}
	for i, s := range out {
		out[i] = "pod " + key + " " + s
	}
	return out
}

// crashLine says why a pod crashed first (its container's termination
// message, such as the Service it needs), then how: "crashed: needs Service
// default/redis:6379 (named in its args), no ready endpoint (exit code 1,
// CrashLoopBackOff, restarts=1)".
func crashLine(crash crashInfo, waiting string, restarts int32) string {
	how := fmt.Sprintf("%s, restarts=%d", orDash(waiting), restarts)
	if crash.code != "" {
		how = crash.code + ", " + how
	}
	if crash.message == "" {
		return "crashed (" + how + ")"
	}
	return "crashed: " + crash.message + " (" + how + ")"
}

// crashInfo is a container's last termination.
type crashInfo struct {
	code, message string
}

// restartsOf sums the containers' restarts and describes the last crash
// and the reason a container waits.
func restartsOf(pod *corev1.Pod) (restarts int32, crash crashInfo, waiting string) {
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		restarts += cs.RestartCount
		if term := cs.LastTerminationState.Terminated; term != nil && crash.code == "" {
			crash = crashInfo{code: fmt.Sprintf("exit code %d", term.ExitCode), message: FirstLine(term.Message)}
		}
		if w := cs.State.Waiting; w != nil && waiting == "" {
			waiting = w.Reason
		}
	}
	return restarts, crash, waiting
}

// PodReady reports whether the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Unschedulable returns the scheduler's message for a pending pod it
// cannot place, else "".
func Unschedulable(pod *corev1.Pod) string {
	if pod.Status.Phase != corev1.PodPending {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return FirstLine(c.Message)
		}
	}
	return ""
}

// ownerOf names the workload that runs pod as "Kind namespace/name": the
// Deployment behind a ReplicaSet it made, else the controlling owner.
func ownerOf(pod *corev1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return "Pod " + pod.Namespace + "/" + pod.Name
	}
	kind, name := ref.Kind, ref.Name
	if hash := pod.Labels["pod-template-hash"]; kind == "ReplicaSet" && hash != "" && strings.HasSuffix(name, "-"+hash) {
		kind, name = "Deployment", strings.TrimSuffix(name, "-"+hash)
	}
	return kind + " " + pod.Namespace + "/" + name
}

// appOfPod finds the app whose objects include the pod's workload, else
// the only app deploying to the pod's namespace.
func (t *Tracker) appOfPod(p *podTrack) *appTrack {
	var byNS []*appTrack
	for _, name := range t.order {
		a := t.apps[name]
		if a.workloads[p.owner] {
			return a
		}
		if a.destNS == p.namespace {
			byNS = append(byNS, a)
		}
	}
	if len(byNS) == 1 {
		return byNS[0]
	}
	return nil
}

// FirstLine is a message as a timeline line shows it: its first line, cut
// at 160 bytes.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	const limit = 160
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}

// plural formats a count and a noun: "1 restart", "2 restarts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
