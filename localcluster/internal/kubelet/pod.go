package kubelet

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Admit is the status of a pod the kubelet just took on its node: its
// addresses, its containers waiting to be created, the first conditions.
func Admit(p *corev1.Pod, podIP, hostIP string, now time.Time) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	st.Phase = corev1.PodPending
	st.StartTime = &t
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	waiting := ReasonContainerCreating
	if len(p.Spec.InitContainers) > 0 {
		waiting = ReasonPodInitializing
	}
	st.InitContainerStatuses = waitingStatuses(p.Spec.InitContainers, ReasonPodInitializing)
	st.ContainerStatuses = waitingStatuses(p.Spec.Containers, waiting)
	SetCondition(st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}, t)
	for _, g := range p.Spec.ReadinessGates {
		// Nothing runs the controllers that would set them.
		SetCondition(st, corev1.PodCondition{Type: g.ConditionType, Status: corev1.ConditionTrue}, t)
	}
	setInitialized(st, p, t)
	SetReadiness(st, false, "", t)
	return st
}

func waitingStatuses(cs []corev1.Container, reason string) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range cs {
		out = append(out, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}})
	}
	return out
}

// conditions sets the pod's phase and conditions from its containers.
func (pl *planner) conditions() {
	t := metav1.NewTime(pl.Now)
	initialized := setInitialized(pl.st, pl.Pod, t)
	phase := podPhase(pl.st, initialized)
	pl.st.Phase = phase
	switch phase {
	case corev1.PodSucceeded:
		SetReadiness(pl.st, false, reasonPodCompleted, t)
	case corev1.PodFailed:
		SetReadiness(pl.st, false, reasonPodFailed, t)
	default:
		ready := initialized
		for _, cs := range append(sidecars(pl.Pod, pl.st), pl.st.ContainerStatuses...) {
			ready = ready && cs.Ready
		}
		SetReadiness(pl.st, ready, "", t)
	}
}

// setInitialized sets the Initialized condition and reports it.
func setInitialized(st *corev1.PodStatus, p *corev1.Pod, t metav1.Time) bool {
	var pending []string
	for i, c := range p.Spec.InitContainers {
		if i >= len(st.InitContainerStatuses) {
			pending = append(pending, c.Name)
			continue
		}
		cs := st.InitContainerStatuses[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		done := cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 || sidecar && cs.State.Running != nil
		if !done {
			pending = append(pending, c.Name)
		}
	}
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if len(pending) > 0 {
		c = corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: reasonContainersNotInit,
			Message: "containers with incomplete status: [" + strings.Join(pending, " ") + "]"}
	}
	SetCondition(st, c, t)
	return len(pending) == 0
}

// podPhase is the kubelet's phase: Pending until the containers run,
// Running while one runs or restarts, Succeeded or Failed once all ended.
func podPhase(st *corev1.PodStatus, initialized bool) corev1.PodPhase {
	if !initialized {
		return corev1.PodPending
	}
	ended, failed, started := 0, false, false
	for _, cs := range st.ContainerStatuses {
		switch {
		case cs.State.Terminated != nil:
			ended++
			failed = failed || cs.State.Terminated.ExitCode != 0
		case cs.State.Running != nil || cs.RestartCount > 0:
			started = true
		}
	}
	switch {
	case ended > 0 && ended == len(st.ContainerStatuses) && failed:
		return corev1.PodFailed
	case ended > 0 && ended == len(st.ContainerStatuses):
		return corev1.PodSucceeded
	case started || ended > 0:
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// sidecars are the statuses of the pod's restartable init containers.
func sidecars(p *corev1.Pod, st *corev1.PodStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for i, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways && i < len(st.InitContainerStatuses) {
			out = append(out, st.InitContainerStatuses[i])
		}
	}
	return out
}

// Memo holds the exact times the controller saw for one pod; status times
// have second precision, so a missing entry falls back on the status,
// rounded up (never early).
type Memo struct {
	Admitted    time.Time
	Initialized time.Time
	starts      map[runKey]startMemo
	ends        map[runKey]time.Time
}

// runKey names one run of a container: its restart count at the start,
// or, for ends, after the exit.
type runKey struct {
	container string
	init      bool
	restarts  int32
}

type startMemo struct {
	at          time.Time
	servicesMet bool
}

func (m *Memo) admitted(p *corev1.Pod) time.Time {
	if !m.Admitted.IsZero() {
		return m.Admitted
	}
	if p.Status.StartTime != nil {
		m.Admitted = p.Status.StartTime.Time
	} else {
		m.Admitted = p.CreationTimestamp.Time
	}
	return m.Admitted
}

func (m *Memo) setStarted(name string, init bool, restarts int32, at time.Time, servicesMet bool) {
	if m.starts == nil {
		m.starts = map[runKey]startMemo{}
	}
	m.starts[runKey{name, init, restarts}] = startMemo{at: at, servicesMet: servicesMet}
}

func (m *Memo) started(name string, init bool, cs *corev1.ContainerStatus) time.Time {
	if s, ok := m.starts[runKey{name, init, cs.RestartCount}]; ok {
		return s.at
	}
	var at time.Time
	switch {
	case cs.State.Running != nil:
		at = cs.State.Running.StartedAt.Add(time.Second)
	case cs.State.Terminated != nil:
		at = cs.State.Terminated.StartedAt.Time
	}
	m.setStarted(name, init, cs.RestartCount, at, false)
	return at
}

func (m *Memo) servicesMet(name string, restarts int32) bool {
	return m.starts[runKey{name, false, restarts}].servicesMet
}

func (m *Memo) setServicesMet(name string, restarts int32) {
	k := runKey{name, false, restarts}
	s := m.starts[k]
	s.servicesMet = true
	m.starts[k] = s
}

func (m *Memo) setEnded(name string, init bool, restarts int32, at time.Time) {
	if m.ends == nil {
		m.ends = map[runKey]time.Time{}
	}
	m.ends[runKey{name, init, restarts}] = at
}

// ended is when the container's last run ended.
func (m *Memo) ended(name string, init bool, cs *corev1.ContainerStatus) time.Time {
	if at, ok := m.ends[runKey{name, init, cs.RestartCount}]; ok {
		return at
	}
	var at time.Time
	switch {
	case cs.State.Terminated != nil:
		at = cs.State.Terminated.FinishedAt.Time
	case cs.LastTerminationState.Terminated != nil:
		at = cs.LastTerminationState.Terminated.FinishedAt.Add(time.Second)
	}
	m.setEnded(name, init, cs.RestartCount, at)
	return at
}

// Initialised is the status of a just admitted pod whose init containers
// are done (each exited 0 at once) and whose containers wait to start: a
// process-backed pod as the process controller takes it.
func Initialised(p *corev1.Pod, now time.Time) *corev1.PodStatus {
	t := metav1.NewTime(now)
	st := p.Status.DeepCopy()
	for i := range st.InitContainerStatuses {
		cs := &st.InitContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: ReasonCompleted, StartedAt: t, FinishedAt: t}}
		cs.Ready = true
	}
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}
	}
	setInitialized(st, p, t)
	return st
}
