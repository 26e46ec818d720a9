package workloads

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
	reasonCrashLoopBackOff   = "CrashLoopBackOff"
	reasonError              = "Error"
	reasonContainersNotReady = "ContainersNotReady"
	reasonPodFailed          = "PodFailed"
	reasonPodCompleted       = "PodCompleted"
	reasonCompleted          = "Completed"
	reasonStartError         = "StartError"
	reasonConfigError        = "CreateContainerConfigError"
	exitCodeFailure          = 1
)

// startedStatus is p's status once its containers (re)started.
func startedStatus(p *corev1.Pod, now time.Time, ready bool) *corev1.PodStatus {
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
	setReadiness(st, ready, "", t)
	return st
}

// exitInfo is how a container ended.
type exitInfo struct {
	code    int32
	reason  string // Error, Completed, StartError
	message string
}

// failure is a container that exited 1 with msg.
func failure(msg string) exitInfo {
	return exitInfo{code: exitCodeFailure, reason: reasonError, message: msg}
}

// crashedStatus is p's status after its containers exited and wait delay
// for their restart, as a kubelet shows CrashLoopBackOff.
func crashedStatus(p *corev1.Pod, now time.Time, delay time.Duration, exit exitInfo) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.LastTerminationState = corev1.ContainerState{Terminated: terminated(cs, t, exit)}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason:  reasonCrashLoopBackOff,
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, cs.Name, podDesc(p)),
		}}
		cs.RestartCount++
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	setReadiness(st, false, "", t)
	return st
}

// endedStatus is the final status of a pod whose containers will not
// restart: Succeeded when they exited 0, Failed otherwise.
func endedStatus(p *corev1.Pod, now time.Time, exit exitInfo) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	reason := reasonPodFailed
	st.Phase = corev1.PodFailed
	if exit.code == 0 {
		st.Phase, reason = corev1.PodSucceeded, reasonPodCompleted
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: terminated(cs, t, exit)}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	setReadiness(st, false, reason, t)
	return st
}

func terminated(cs *corev1.ContainerStatus, now metav1.Time, exit exitInfo) *corev1.ContainerStateTerminated {
	started := now
	if cs.State.Running != nil {
		started = cs.State.Running.StartedAt
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: exit.code, Reason: exit.reason, Message: exit.message,
		StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
	}
}

// setReadiness sets the Ready and ContainersReady conditions; reason
// overrides ContainersNotReady when not ready.
func setReadiness(st *corev1.PodStatus, ready bool, reason string, now metav1.Time) {
	status, msg := corev1.ConditionTrue, ""
	if !ready {
		status = corev1.ConditionFalse
		if reason == "" {
			reason = reasonContainersNotReady
			var names []string
			for _, cs := range st.ContainerStatuses {
				names = append(names, cs.Name)
			}
			msg = "containers with unready status: [" + strings.Join(names, " ") + "]"
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		setCondition(st, corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: msg}, now)
	}
}

// setCondition replaces or adds c, keeping the transition time when the
// status does not change.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition, now metav1.Time) {
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
