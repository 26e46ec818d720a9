package workloads

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// runBeforeCrash is how long a container whose services are missing runs
// before it exits 1; a service that turns ready within it saves the run.
const runBeforeCrash = time.Second

// phase is where a pod with required services is in its lifecycle.
type phase string

const (
	// phaseIdle: nothing to do (not yet created by KWOK, finished, deleted).
	phaseIdle phase = "idle"
	// phaseNotStarted: initialised, containers waiting for their first start.
	phaseNotStarted phase = "not-started"
	// phaseFailingRun: containers run but will exit unless services appear.
	phaseFailingRun phase = "failing-run"
	// phaseBackOff: containers crashed and wait for their restart.
	phaseBackOff phase = "back-off"
	// phaseRunning: containers run and are ready; they stay so.
	phaseRunning phase = "running"
	// phaseFailed: a restartPolicy Never pod ended Failed (classify calls
	// it idle).
	phaseFailed phase = "failed"
)

// settings are a managed pod's annotations, parsed.
type settings struct {
	requires   []Requirement
	backoff    Backoff
	readyDelay time.Duration
}

// parseSettings parses a pod's annotations. On error the settings still
// hold the defaults for what did not parse.
func parseSettings(annotations map[string]string) (settings, error) {
	s := settings{backoff: KubeletBackoff}
	var errs []error
	var err error
	if s.requires, err = ParseRequires(annotations[stages.RequiresAnnotation]); err != nil {
		errs = append(errs, err)
	}
	if b, err := ParseBackoff(annotations[BackoffAnnotation]); err != nil {
		errs = append(errs, err)
	} else {
		s.backoff = b
	}
	s.readyDelay, _ = time.ParseDuration(stages.DefaultReadyDelay)
	if v := annotations[stages.ReadyDelayAnnotation]; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("annotation %s: %q is not a duration", stages.ReadyDelayAnnotation, v))
		} else {
			s.readyDelay = d
		}
	}
	return s, errors.Join(errs...)
}

// classify tells the pod's phase from its status and the time the status
// says that phase began (second precision).
func classify(p *corev1.Pod) (phase, time.Time) {
	if p.DeletionTimestamp != nil || p.Status.PodIP == "" || len(p.Status.ContainerStatuses) == 0 ||
		p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return phaseIdle, time.Time{}
	}
	initialized := condition(p, corev1.PodInitialized)
	if initialized == nil || initialized.Status != corev1.ConditionTrue {
		return phaseIdle, time.Time{}
	}
	cs := p.Status.ContainerStatuses[0]
	switch {
	case cs.State.Running != nil && cs.Ready:
		return phaseRunning, cs.State.Running.StartedAt.Time
	case cs.State.Running != nil:
		return phaseFailingRun, cs.State.Running.StartedAt.Time
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == reasonCrashLoopBackOff && cs.LastTerminationState.Terminated != nil:
		return phaseBackOff, cs.LastTerminationState.Terminated.FinishedAt.Time
	case cs.State.Waiting != nil && p.Status.Phase == corev1.PodPending:
		return phaseNotStarted, initialized.LastTransitionTime.Time
	}
	return phaseIdle, time.Time{}
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// step is what to do for a pod now.
type step struct {
	// status replaces the pod's status; nil writes nothing.
	status *corev1.PodStatus
	// next is the phase the new status puts the pod in.
	next phase
	// events are recorded on the pod once the status is written.
	events []event
	// after asks for another look after this long; 0 waits for a change.
	after time.Duration
}

type event struct {
	warning         bool
	container       string
	reason, message string
}

// plan decides the next step of pod p, whose current phase began at since
// (precise where the caller knows it). missing lists the requirements
// without a ready endpoint now.
func plan(p *corev1.Pod, s settings, ph phase, since, now time.Time, missing func([]Requirement) []Requirement) step {
	var due time.Time
	switch ph {
	case phaseNotStarted:
		due = since.Add(s.readyDelay)
	case phaseFailingRun:
		due = since.Add(runBeforeCrash)
	case phaseBackOff:
		due = since.Add(s.backoff.Delay(p.Status.ContainerStatuses[0].RestartCount))
	default:
		return step{}
	}
	if wait := due.Sub(now); wait > 0 {
		return step{after: wait}
	}
	gone := missing(s.requires)
	switch {
	case len(gone) == 0:
		return start(p, now, true)
	case ph == phaseFailingRun:
		return crash(p, s, now, gone)
	default:
		st := start(p, now, false)
		st.after = runBeforeCrash
		return st
	}
}

func start(p *corev1.Pod, now time.Time, ready bool) step {
	st := step{status: startedStatus(p, now, ready), next: phaseFailingRun}
	if ready {
		st.next = phaseRunning
	}
	if ph, _ := classify(p); ph == phaseFailingRun {
		return st // already running: it just turns ready
	}
	for _, c := range p.Spec.Containers {
		st.events = append(st.events, event{container: c.Name, reason: "Started", message: "Started container " + c.Name})
	}
	return st
}

func crash(p *corev1.Pod, s settings, now time.Time, gone []Requirement) step {
	names := make([]string, len(gone))
	for i, r := range gone {
		names[i] = r.String()
	}
	msg := "required services without a ready endpoint: " + strings.Join(names, ", ")
	if p.Spec.RestartPolicy == corev1.RestartPolicyNever {
		return step{status: endedStatus(p, now, failure(msg)), next: phaseFailed}
	}
	restarts := p.Status.ContainerStatuses[0].RestartCount + 1
	delay := s.backoff.Delay(restarts)
	st := step{status: crashedStatus(p, now, delay, failure(msg)), next: phaseBackOff, after: delay}
	for _, c := range p.Spec.Containers {
		st.events = append(st.events, event{warning: true, container: c.Name, reason: "BackOff",
			message: fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.Name, podDesc(p))})
	}
	return st
}

// podDesc formats a pod as the kubelet does in messages.
func podDesc(p *corev1.Pod) string { return fmt.Sprintf("%s_%s(%s)", p.Name, p.Namespace, p.UID) }
