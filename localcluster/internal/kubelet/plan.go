package kubelet

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wavecd/wavecd/localcluster/internal/deps"
)

// Unmet is a requirement without a ready endpoint now, and why.
type Unmet struct {
	deps.Requirement
	// Why: "no ready endpoint", "not created yet", ...
	Why string
}

func (u Unmet) String() string { return "needs " + u.Describe() + ", " + u.Why }

// Input is what Plan decides from.
type Input struct {
	Pod      *corev1.Pod
	Settings Settings
	Now      time.Time
	// Memo holds the exact times seen so far; Plan records new ones.
	Memo *Memo
	// Needs returns what a container (init or main) needs.
	Needs func(c *corev1.Container) []deps.Requirement
	// Unmet returns those of rs without a ready endpoint now.
	Unmet func(rs []deps.Requirement) []Unmet
}

// Step is what to do for a pod now.
type Step struct {
	// Status replaces the pod's status; nil writes nothing.
	Status *corev1.PodStatus
	// Events are recorded once the status is written.
	Events []Event
	// After asks for another look after this long; 0 waits for a change.
	After time.Duration
	// WaitsOn are Services whose changes should bring the pod back.
	WaitsOn []deps.Requirement
}

// Event is a kubelet event on one container.
type Event struct {
	Warning                    bool
	Container, Reason, Message string
}

// Plan takes an admitted pod as far as it goes by in.Now.
func Plan(in Input) Step {
	pl := &planner{Input: in, st: in.Pod.Status.DeepCopy()}
	if pl.Memo == nil {
		pl.Memo = &Memo{}
	}
	if at, done := pl.initContainers(); done {
		pl.mainContainers(at)
	}
	pl.conditions()
	step := Step{Events: pl.events, WaitsOn: pl.waitsOn}
	if !pl.wake.IsZero() {
		step.After = max(pl.wake.Sub(in.Now), time.Millisecond)
	}
	if !equality.Semantic.DeepEqual(*pl.st, in.Pod.Status) {
		step.Status = pl.st
	}
	return step
}

// planner is one Plan call's work.
type planner struct {
	Input
	st      *corev1.PodStatus
	events  []Event
	waitsOn []deps.Requirement
	wake    time.Time
}

// at asks for a look at t, when t is in the future.
func (pl *planner) at(t time.Time) {
	if t.After(pl.Now) && (pl.wake.IsZero() || t.Before(pl.wake)) {
		pl.wake = t
	}
}

func (pl *planner) event(warning bool, container, reason, msg string) {
	pl.events = append(pl.events, Event{Warning: warning, Container: container, Reason: reason, Message: msg})
}

// initContainers runs the init containers in turn and returns when the
// last one finished, once all have.
func (pl *planner) initContainers() (time.Time, bool) {
	at := pl.Memo.admitted(pl.Pod)
	for i := range pl.Pod.Spec.InitContainers {
		c := &pl.Pod.Spec.InitContainers[i]
		cs := statusOf(pl.st.InitContainerStatuses, c.Name)
		if cs == nil {
			return at, false
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			at = maxTime(at, pl.Memo.ended(c.Name, true, cs))
			continue
		case cs.State.Waiting != nil:
			pl.start(c, cs, true, at, true)
			cs.Started = ptr.To(true)
		}
		if sidecar {
			cs.Ready = true
			continue
		}
		if unmet := pl.Unmet(pl.Needs(c)); len(unmet) > 0 {
			pl.waitsOn = append(pl.waitsOn, pl.Needs(c)...)
			return at, false // a wait loop: it runs until its Services are ready
		}
		end := maxTime(pl.Memo.started(c.Name, true, cs), pl.Now)
		if len(pl.Needs(c)) == 0 {
			end = pl.Memo.started(c.Name, true, cs)
		}
		cs.State = corev1.ContainerState{Terminated: Terminated(cs, metav1.NewTime(end), exitWith(0))}
		cs.Ready, cs.Started = true, ptr.To(false)
		pl.Memo.setEnded(c.Name, true, cs.RestartCount, end)
		at = end
	}
	return at, true
}

// mainContainers takes each main container a step further; the pod was
// initialised at initialized.
func (pl *planner) mainContainers(initialized time.Time) {
	if pl.Memo.Initialized.IsZero() {
		pl.Memo.Initialized = initialized
	}
	for i := range pl.Pod.Spec.Containers {
		c := &pl.Pod.Spec.Containers[i]
		if cs := statusOf(pl.st.ContainerStatuses, c.Name); cs != nil {
			pl.container(c, cs, pl.Memo.Initialized)
		}
	}
}

// container takes one main container a step further.
func (pl *planner) container(c *corev1.Container, cs *corev1.ContainerStatus, initialized time.Time) {
	if w := cs.State.Waiting; w != nil {
		due := initialized.Add(pl.Settings.StartDelay)
		if pl.Settings.ReadyAt != nil {
			due = initialized.Add(*pl.Settings.ReadyAt)
		}
		switch w.Reason {
		case ReasonCrashLoopBackOff:
			due = pl.Memo.ended(c.Name, false, cs).Add(pl.Settings.Backoff.Delay(cs.RestartCount))
		case ReasonPodInitializing:
			w.Reason = ReasonContainerCreating
		}
		if due.After(pl.Now) {
			pl.at(due)
			return
		}
		pl.start(c, cs, false, due, false)
	}
	if cs.State.Running == nil {
		return // terminated for good
	}
	pl.running(c, cs)
}

// start starts a container at t and records whether its Services were
// ready then.
func (pl *planner) start(c *corev1.Container, cs *corev1.ContainerStatus, init bool, t time.Time, quiet bool) {
	unmet := pl.Unmet(pl.Needs(c))
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t)}}
	cs.ContainerID = fmt.Sprintf("kwok://%s-%s-%d", pl.Pod.UID, c.Name, cs.RestartCount)
	cs.Started, cs.Ready = ptr.To(false), false
	pl.Memo.setStarted(c.Name, init, cs.RestartCount, t, len(unmet) == 0)
	if !quiet {
		pl.event(false, c.Name, "Started", "Started container "+c.Name)
	}
}

// running shows a running container's course as of now: Started, Ready,
// its Services checked, its exit.
func (pl *planner) running(c *corev1.Container, cs *corev1.ContainerStatus) {
	start := pl.Memo.started(c.Name, false, cs)
	met := pl.Memo.servicesMet(c.Name, cs.RestartCount)
	r := plan(c, pl.Settings, pl.Memo.admitted(pl.Pod), start, met)
	if !r.check.IsZero() && !r.check.After(pl.Now) {
		unmet := pl.Unmet(pl.Needs(c))
		if len(unmet) > 0 {
			pl.exit(c, cs, r.check, Failure(describeUnmet(unmet)), "")
			return
		}
		pl.Memo.setServicesMet(c.Name, cs.RestartCount)
		r = plan(c, pl.Settings, pl.Memo.admitted(pl.Pod), start, true)
	}
	if !r.end.IsZero() && !r.end.After(pl.Now) {
		pl.exit(c, cs, r.end, r.exit, r.event)
		return
	}
	cs.Started = ptr.To(!r.started.IsZero() && !r.started.After(pl.Now))
	cs.Ready = !r.ready.IsZero() && !r.ready.After(pl.Now)
	for _, t := range []time.Time{r.started, r.ready, r.check, r.end} {
		pl.at(t)
	}
}

// exit ends a container's run at t: it waits in back-off for its restart
// when the restart policy says so, or stays terminated.
func (pl *planner) exit(c *corev1.Container, cs *corev1.ContainerStatus, t time.Time, exit Exit, unhealthy string) {
	mt := metav1.NewTime(t)
	if unhealthy != "" {
		pl.event(true, c.Name, "Unhealthy", unhealthy)
		pl.event(false, c.Name, "Killing", fmt.Sprintf("Container %s failed its probe, will be restarted", c.Name))
		exit.Message = unhealthy
	}
	policy := pl.Pod.Spec.RestartPolicy
	if policy == corev1.RestartPolicyNever || policy == corev1.RestartPolicyOnFailure && exit.Code == 0 {
		cs.State = corev1.ContainerState{Terminated: Terminated(cs, mt, exit)}
		cs.Ready, cs.Started = false, ptr.To(false)
		if exit.Code != 0 {
			pl.event(true, c.Name, "Failed", fmt.Sprintf("Container exited with code %d: %s", exit.Code, exit.Message))
		}
		return
	}
	delay := pl.Settings.Backoff.Delay(cs.RestartCount + 1)
	crashed(cs, pl.Pod, mt, delay, exit)
	pl.Memo.setEnded(c.Name, false, cs.RestartCount, t)
	pl.event(true, c.Name, "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.Name, PodDesc(pl.Pod)))
	pl.at(t.Add(delay))
}

func describeUnmet(unmet []Unmet) string {
	parts := make([]string, len(unmet))
	for i, u := range unmet {
		parts[i] = u.String()
	}
	return strings.Join(parts, "; ")
}

func statusOf(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
