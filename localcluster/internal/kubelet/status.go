package kubelet

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Reasons the kubelet writes into container and pod statuses.
const (
	ReasonCrashLoopBackOff   = "CrashLoopBackOff"
	ReasonError              = "Error"
	ReasonCompleted          = "Completed"
	ReasonStartError         = "StartError"
	ReasonConfigError        = "CreateContainerConfigError"
	ReasonContainerCreating  = "ContainerCreating"
	ReasonPodInitializing    = "PodInitializing"
	reasonContainersNotReady = "ContainersNotReady"
	reasonContainersNotInit  = "ContainersNotInitialized"
	reasonPodFailed          = "PodFailed"
	reasonPodCompleted       = "PodCompleted"
	exitCodeFailure          = 1
	// exitCodeKilled is what a container killed after a failed probe shows.
	exitCodeKilled = 137
)

// Exit is how a container ended.
type Exit struct {
	Code    int32
	Reason  string // Error, Completed, StartError
	Message string
}

// Failure is a container that exited 1 with msg.
func Failure(msg string) Exit {
	return Exit{Code: exitCodeFailure, Reason: ReasonError, Message: msg}
}

// exitWith is a container that ended with code after its run time.
func exitWith(code int32) Exit {
	if code == 0 {
		return Exit{Reason: ReasonCompleted}
	}
	return Exit{Code: code, Reason: ReasonError}
}

// StartedStatus is p's status once all its containers (re)started: a
// process-backed pod mirrors one process in every container.
func StartedStatus(p *corev1.Pod, now time.Time, ready bool) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	if st.StartTime == nil {
		st.StartTime = &t
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.State.Running == nil {
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}
		}
		cs.Ready, cs.Started = ready, ptr.To(true)
	}
	SetReadiness(st, ready, "", t)
	return st
}

// CrashedStatus is p's status after all its containers exited and wait
// delay for their restart, as a kubelet shows CrashLoopBackOff.
func CrashedStatus(p *corev1.Pod, now time.Time, delay time.Duration, exit Exit) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	for i := range st.ContainerStatuses {
		crashed(&st.ContainerStatuses[i], p, t, delay, exit)
	}
	SetReadiness(st, false, "", t)
	return st
}

// crashed shows cs exited and waiting delay for its restart.
func crashed(cs *corev1.ContainerStatus, p *corev1.Pod, t metav1.Time, delay time.Duration, exit Exit) {
	cs.LastTerminationState = corev1.ContainerState{Terminated: Terminated(cs, t, exit)}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason:  ReasonCrashLoopBackOff,
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, cs.Name, PodDesc(p)),
	}}
	cs.RestartCount++
	cs.Ready, cs.Started = false, ptr.To(false)
}

// EndedStatus is the final status of a pod whose containers will not
// restart: Succeeded when they exited 0, Failed otherwise.
func EndedStatus(p *corev1.Pod, now time.Time, exit Exit) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: Terminated(cs, t, exit)}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	st.Phase = corev1.PodFailed
	reason := reasonPodFailed
	if exit.Code == 0 {
		st.Phase, reason = corev1.PodSucceeded, reasonPodCompleted
	}
	SetReadiness(st, false, reason, t)
	return st
}

// Terminated is the terminated state of cs's current run, ended now.
func Terminated(cs *corev1.ContainerStatus, now metav1.Time, exit Exit) *corev1.ContainerStateTerminated {
	started := now
	if cs.State.Running != nil {
		started = cs.State.Running.StartedAt
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: exit.Code, Reason: exit.Reason, Message: exit.Message,
		StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
	}
}

// WaitingStatus is p's status while its containers cannot be created.
func WaitingStatus(p *corev1.Pod, reason, msg string) *corev1.PodStatus {
	st := p.Status.DeepCopy()
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
		st.ContainerStatuses[i].Ready = false
	}
	return st
}

// SetReadiness sets the Ready and ContainersReady conditions; reason
// overrides ContainersNotReady when not ready.
func SetReadiness(st *corev1.PodStatus, ready bool, reason string, now metav1.Time) {
	status, msg := corev1.ConditionTrue, ""
	if !ready && reason == "" {
		reason, msg = reasonContainersNotReady, unready(st.ContainerStatuses)
	}
	if !ready {
		status = corev1.ConditionFalse
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		SetCondition(st, corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: msg}, now)
	}
}

// unready is the kubelet's message naming the containers not ready.
func unready(statuses []corev1.ContainerStatus) string {
	var names []string
	for _, cs := range statuses {
		if !cs.Ready {
			names = append(names, cs.Name)
		}
	}
	return "containers with unready status: [" + strings.Join(names, " ") + "]"
}

// SetCondition replaces or adds c, keeping the transition time when the
// status does not change.
func SetCondition(st *corev1.PodStatus, c corev1.PodCondition, now metav1.Time) {
	c.LastTransitionTime = now
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		if st.Conditions[i].Status == c.Status {
			c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		}
		st.Conditions[i] = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// Condition returns p's condition of type t, or nil.
func Condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	return statusCondition(&p.Status, t)
}

func statusCondition(st *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// PodDesc formats a pod as the kubelet does in messages.
func PodDesc(p *corev1.Pod) string { return fmt.Sprintf("%s_%s(%s)", p.Name, p.Namespace, p.UID) }
