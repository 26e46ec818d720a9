package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// DefaultStallTimeout is how long a wait may make no progress before it is
// examined as a stall, when Options.StallTimeout is 0.
const DefaultStallTimeout = 2 * time.Minute

// EventStalled is recorded when a wait is found stalled.
const EventStalled EventType = "Stalled"

// AnnotationNodeProvisioner marks an Application (or a workload) that
// deploys a node provisioner, for apps whose objects do not show it.
const AnnotationNodeProvisioner = "wavecd.io/node-provisioner"

// NodeProvisioner is an app that deploys a node provisioner such as
// Karpenter, as a stall explanation names it.
type NodeProvisioner struct {
	// App is the Application that deploys it.
	App string `json:"app"`
	// Running is set when a pod of it runs.
	Running bool `json:"running,omitempty"`
	// Parent is the app whose sync creates App; "" when none does.
	Parent string `json:"parent,omitempty"`
	// Wave is App's sync wave in Parent.
	Wave int `json:"wave,omitempty"`
	// Problem says why it does not run, when that is known (its last
	// sync failed).
	Problem string `json:"problem,omitempty"`
}

// NodeProvisionerFinder lists the node provisioners of the cluster; the
// controller provides it.
type NodeProvisionerFinder func(ctx context.Context) ([]NodeProvisioner, error)

// blockedObject is one object a stalled wait waits on, with its pods.
type blockedObject struct {
	// Path names the object, after the objects it is reached through: an
	// Application, then one of its Deployments.
	Path []string `json:"path"`
	Pods []*unstructured.Unstructured
}

// stallInput is what a stall is explained from.
type stallInput struct {
	// App is the app whose sync waits.
	App string
	// Step names the step that waits: "wave 0", "PreSync wave 1".
	Step    string
	Blocked []blockedObject
	// Provisioners and ProvisionerErr are the finder's answer; both empty
	// when there is no finder: then nothing is said about provisioners.
	Provisioners   []NodeProvisioner
	ProvisionerErr string
	// NoFinder is set when nobody can tell about node provisioners.
	NoFinder bool
}

// explainStall says why a step is stalled: "wave 0 of calico waits on
// Deployment calico-system/tigera-operator: pod tigera-operator-x Pending:
// 0/1 nodes are available: ...; no node provisioner is running; karpenter
// is in wave 1 of root". It returns "" when no pod of the blocked objects
// is Pending with a scheduling failure: such a wait is slow, not stalled.
func explainStall(in stallInput) string {
	var first string
	more := 0
	for _, b := range in.Blocked {
		pod, reason := firstUnschedulable(b.Pods)
		if pod == "" {
			continue
		}
		if first != "" {
			more++
			continue
		}
		first = strings.Join(b.Path, ": ") + ": pod " + pod + " Pending: " + reason
	}
	if first == "" {
		return ""
	}
	msg := in.Step + " of " + in.App + " waits on " + first
	if more > 0 {
		msg += fmt.Sprintf(", and on %s whose pods cannot be scheduled", plural(more, "more object"))
	}
	if in.NoFinder {
		return msg
	}
	return msg + "; " + provisionerPhrase(in.Provisioners, in.ProvisionerErr)
}

// hasUnschedulable reports whether a blocked object has a pod the
// scheduler cannot place.
func hasUnschedulable(blocked []blockedObject) bool {
	return slices.ContainsFunc(blocked, func(b blockedObject) bool {
		pod, _ := firstUnschedulable(b.Pods)
		return pod != ""
	})
}

// firstUnschedulable returns the first pod (by name) that is Pending
// because the scheduler cannot place it, and the scheduler's reason.
func firstUnschedulable(pods []*unstructured.Unstructured) (name, reason string) {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	for _, p := range sorted {
		if r, ok := unschedulableReason(p); ok {
			return p.GetName(), r
		}
	}
	return "", ""
}

// unschedulableReason returns the scheduler's message for a Pending pod
// whose PodScheduled condition is False with reason Unschedulable.
func unschedulableReason(pod *unstructured.Unstructured) (string, bool) {
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase != "Pending" {
		return "", false
	}
	conditions, _, _ := unstructured.NestedSlice(pod.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "PodScheduled" && m["status"] == "False" && m["reason"] == "Unschedulable" {
			msg, _ := m["message"].(string)
			return schedulerReason(msg), true
		}
	}
	return "", false
}

// schedulerReason shortens the scheduler's message to its first sentence,
// the one about nodes, leaving out what follows (claims, preemption).
func schedulerReason(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.Index(msg, ". "); i > 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, " preemption:"); i > 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSuffix(strings.TrimSuffix(msg, ","), ".")
	if msg == "" {
		return "unschedulable"
	}
	return msg
}

// provisionerPhrase says what the node provisioners do about pods that
// cannot be scheduled.
func provisionerPhrase(ps []NodeProvisioner, errText string) string {
	if errText != "" {
		return "node provisioners unknown: " + errText
	}
	if len(ps) == 0 {
		return "no node provisioner is running, and no app deploys one"
	}
	var running []string
	for _, p := range ps {
		if p.Running {
			running = append(running, p.App)
		}
	}
	if len(running) > 0 {
		verb := "is"
		if len(running) > 1 {
			verb = "are"
		}
		return "node provisioner " + strings.Join(running, ", ") + " " + verb + " running but made no node for them"
	}
	parts := []string{"no node provisioner is running"}
	for _, p := range ps {
		s := p.App
		if p.Parent != "" {
			s += fmt.Sprintf(" is in wave %d of %s", p.Wave, p.Parent)
		} else {
			s += " is not running"
		}
		if p.Problem != "" {
			s += " (" + p.Problem + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// stepName names the step a state works on: "wave 0", "PreSync wave 1".
func stepName(st *State) string {
	if st.SyncPhase == "" || st.SyncPhase == v1alpha1.SyncPhaseSync {
		return fmt.Sprintf("wave %d", st.Wave)
	}
	return fmt.Sprintf("%s wave %d", st.SyncPhase, st.Wave)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// stallClock tracks a wait's progress for stall detection.
type stallClock struct {
	timeout  time.Duration
	progress time.Time
	timer    *time.Timer
}

func newStallClock(timeout time.Duration) *stallClock {
	if timeout == 0 {
		timeout = DefaultStallTimeout
	}
	c := &stallClock{timeout: timeout, progress: time.Now()}
	if timeout > 0 {
		c.timer = time.NewTimer(timeout)
	}
	return c
}

// C fires when the wait may be stalled; nil (never) when detection is off.
func (c *stallClock) C() <-chan time.Time {
	if c.timer == nil {
		return nil
	}
	return c.timer.C
}

// moved records progress.
func (c *stallClock) moved() { c.progress = time.Now() }

// due reports whether no progress was made for the timeout, and rearms the
// timer for the next look.
func (c *stallClock) due() bool {
	left := c.timeout - time.Since(c.progress)
	if left > 0 {
		c.timer.Reset(left)
		return false
	}
	c.timer.Reset(c.timeout)
	return true
}

func (c *stallClock) stop() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// examineStall runs when a wait made no progress for the stall timeout:
// when one of its objects' pods cannot be scheduled, the state's message
// says "stalled: " and why, and State.Stalled holds the reason.
func (w *waiter) examineStall(ctx context.Context) {
	if w.st.ID == "" {
		return
	}
	in := stallInput{App: w.e.opts.AppName, Step: stepName(w.st), Blocked: w.blocked(ctx)}
	if !hasUnschedulable(in.Blocked) {
		return
	}
	if find := w.e.opts.NodeProvisioners; find != nil {
		ps, err := find(ctx)
		in.Provisioners = ps
		if err != nil {
			in.ProvisionerErr = err.Error()
		}
	} else {
		in.NoFinder = true
	}
	reason := explainStall(in)
	if reason == "" || reason == w.st.Stalled {
		return
	}
	w.st.Stalled = reason
	w.st.Message = "stalled: " + reason
	w.e.events.add(ctx, Event{Type: EventStalled, SyncPhase: w.st.SyncPhase, Wave: w.st.Wave, Message: reason})
	w.e.progress(w.st)
}

// blocked lists the undecided objects of the wait with their pods; an
// Application stands for its workloads that are not Healthy.
func (w *waiter) blocked(ctx context.Context) []blockedObject {
	var out []blockedObject
	for _, tg := range w.targets {
		if tg.kind != targetHealth || w.st.Tasks[tg.index].Phase.Terminal() {
			continue
		}
		obj := w.objs[objectKey(tg.ref)]
		if obj == nil {
			continue
		}
		name := describeRef(tg.ref.GVK.Kind, tg.ref.Namespace, tg.ref.Name)
		switch gk := tg.ref.GVK.GroupKind(); {
		case hasPods(gk):
			out = append(out, blockedObject{Path: []string{name}, Pods: w.podsOf(obj)})
		case gk == applicationGK:
			for _, b := range w.appWorkloads(ctx, obj) {
				b.Path = append([]string{tg.ref.GVK.Kind + " " + tg.ref.Name}, b.Path...)
				out = append(out, b)
			}
		}
	}
	return out
}

var applicationGK = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}

// appWorkloads reads the workloads an Application lists in
// status.resources that are not Healthy, with their pods.
func (w *waiter) appWorkloads(ctx context.Context, app *unstructured.Unstructured) []blockedObject {
	resources, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
	var out []blockedObject
	for _, r := range resources {
		m, _ := r.(map[string]any)
		group, _ := m["group"].(string)
		version, _ := m["version"].(string)
		kind, _ := m["kind"].(string)
		ns, _ := m["namespace"].(string)
		name, _ := m["name"].(string)
		healthStatus, _, _ := unstructured.NestedString(m, "health", "status")
		gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
		if !hasPods(gvk.GroupKind()) || healthStatus == "Healthy" || name == "" {
			continue
		}
		ri, err := w.e.cluster.ResourceFor(gvk, ns)
		if err != nil {
			continue
		}
		obj, err := ri.Get(ctx, name, getOptions)
		if err != nil {
			continue
		}
		out = append(out, blockedObject{Path: []string{describeRef(kind, ns, name)}, Pods: w.listPods(ctx, obj)})
	}
	return out
}

func describeRef(kind, namespace, name string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	return kind + " " + name
}
