package workloads

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// procView is what the controller knows of a pod's process.
type procView struct {
	// running: a process runs for the pod, started at started.
	running     bool
	started     time.Time
	containerID string
	// exit is how the last process ended, while the pod's status does not
	// show it yet; finished is when (zero when unknown).
	exit     *kubelet.Exit
	finished time.Time
}

// processAction is what the controller does for a process-backed pod.
type processAction string

const (
	actWait   processAction = "wait"   // nothing now; step.after may ask for another look
	actStart  processAction = "start"  // start the process, then show it running
	actStop   processAction = "stop"   // stop the process (SIGTERM, SIGKILL after the grace period)
	actRemove processAction = "remove" // delete the pod object: its process has stopped
	actStatus processAction = "status" // write step.status
)

// processStep is the next thing to do for a process-backed pod.
type processStep struct {
	action processAction
	status *corev1.PodStatus
	events []kubelet.Event
	after  time.Duration
	// restart: the status shows a run whose process is gone unseen (the
	// controller restarted); the new start counts as a restart.
	restart bool
}

// planProcess decides the next step for pod p: its process runs while the
// pod is scheduled, initialised and not ended, once its node runs it
// (runnable: Ready, or for a host-network pod, NotReady for its network
// only, as a kubelet starts a CNI agent or an operator on the host network);
// an exit is shown as a kubelet shows it and restarted after the back-off
// as the restart policy says; a deleted pod goes once its process has.
func planProcess(p *corev1.Pod, v procView, runnable bool, b kubelet.Backoff, now time.Time) processStep {
	if p.DeletionTimestamp != nil {
		switch {
		case v.running:
			return processStep{action: actStop}
		case len(p.Finalizers) > 0:
			return processStep{action: actWait}
		}
		return processStep{action: actRemove}
	}
	ph := processPhase(p)
	switch {
	case ph == phaseIdle && v.running:
		return processStep{action: actStop} // the pod ended without its process
	case ph == phaseIdle:
		return processStep{action: actWait}
	case v.exit != nil:
		return exitStep(p, *v.exit, v.finished, b)
	case v.running && (ph != phaseRunning || p.Status.ContainerStatuses[0].ContainerID != v.containerID):
		return processStep{action: actStatus, status: processRunningStatus(p, v.started, v.containerID, false)}
	case v.running:
		return processStep{action: actWait}
	}
	if ph == phaseBackOff {
		cs := p.Status.ContainerStatuses[0]
		since := v.finished
		if since.IsZero() { // status times have second precision: never early
			since = cs.LastTerminationState.Terminated.FinishedAt.Add(time.Second)
		}
		if wait := since.Add(b.Delay(cs.RestartCount)).Sub(now); wait > 0 {
			return processStep{action: actWait, after: wait}
		}
	}
	if !runnable {
		return processStep{action: actWait} // a node event brings the pod back
	}
	return processStep{action: actStart, restart: ph == phaseRunning}
}

// phase is where a process-backed pod is in its lifecycle.
type phase string

const (
	// phaseIdle: nothing to run (not initialised yet, ended).
	phaseIdle phase = "idle"
	// phaseNotStarted: initialised, the process waits for its first start.
	phaseNotStarted phase = "not-started"
	// phaseBackOff: the process exited and waits for its restart.
	phaseBackOff phase = "back-off"
	// phaseRunning: the status shows the process running.
	phaseRunning phase = "running"
)

// processPhase tells where a process-backed pod is from its status.
func processPhase(p *corev1.Pod) phase {
	if p.Status.PodIP == "" || len(p.Status.ContainerStatuses) == 0 ||
		p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return phaseIdle
	}
	if c := kubelet.Condition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		return phaseIdle
	}
	cs := p.Status.ContainerStatuses[0]
	switch {
	case cs.State.Running != nil:
		return phaseRunning
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == kubelet.ReasonCrashLoopBackOff && cs.LastTerminationState.Terminated != nil:
		return phaseBackOff
	case cs.State.Waiting != nil:
		return phaseNotStarted
	}
	return phaseIdle
}

// exitStep shows an exit: the pod ends when its restart policy says the
// container stays down, otherwise it waits for the restart in back-off.
func exitStep(p *corev1.Pod, exit kubelet.Exit, finished time.Time, b kubelet.Backoff) processStep {
	policy := p.Spec.RestartPolicy
	if policy == corev1.RestartPolicyNever || policy == corev1.RestartPolicyOnFailure && exit.Code == 0 {
		st := processStep{action: actStatus, status: kubelet.EndedStatus(p, finished, exit)}
		for _, c := range p.Spec.Containers {
			st.events = append(st.events, exitEvent(c.Name, exit))
		}
		return st
	}
	delay := b.Delay(p.Status.ContainerStatuses[0].RestartCount + 1)
	st := processStep{action: actStatus, status: kubelet.CrashedStatus(p, finished, delay, exit), after: delay}
	for _, c := range p.Spec.Containers {
		st.events = append(st.events, exitEvent(c.Name, exit), kubelet.Event{Warning: true, Container: c.Name, Reason: "BackOff",
			Message: fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.Name, kubelet.PodDesc(p))})
	}
	return st
}

func exitEvent(container string, exit kubelet.Exit) kubelet.Event {
	if exit.Code == 0 {
		return kubelet.Event{Container: container, Reason: kubelet.ReasonCompleted, Message: "Container exited with code 0"}
	}
	msg := fmt.Sprintf("Container exited with code %d", exit.Code)
	if exit.Message != "" {
		msg += ": " + exit.Message
	}
	return kubelet.Event{Warning: true, Container: container, Reason: "Failed", Message: msg}
}

// processRunningStatus is p's status once its process started at started:
// a ready start whose containers show the new process; restart records the
// earlier run, whose end went unseen, as terminated.
func processRunningStatus(p *corev1.Pod, started time.Time, containerID string, restart bool) *corev1.PodStatus {
	t := metav1.NewTime(started)
	st := kubelet.StartedStatus(p, started, true)
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if restart { // startedStatus kept the earlier run's state and container ID
			cs.LastTerminationState = corev1.ContainerState{Terminated: kubelet.Terminated(cs, t, unseenExit)}
			cs.RestartCount++
		}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}
		cs.ContainerID = containerID
	}
	return st
}

// unseenExit is the end of a run the controller did not see, because it
// was not running then (the cluster stopped, or the controller restarted).
var unseenExit = kubelet.Exit{Code: 255, Reason: "Unknown", Message: "the process was gone when the workloads controller started"}
