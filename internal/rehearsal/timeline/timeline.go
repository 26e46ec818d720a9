package timeline

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// Observation is one watch event: an Application or a Pod as it is now,
// or a note of the local cluster.
type Observation struct {
	at      time.Time
	app     *v1alpha1.Application
	pod     *corev1.Pod
	note    *corev1.Event
	deleted bool
	// initial marks objects listed when the watch started (a reused
	// cluster), as opposed to created since.
	initial bool
}

// appTrack is what the timeline knows about one Application.
type appTrack struct {
	name, wave   string
	root         bool
	sync, health string
	healthMsg    string
	operation    bool // spec-level operation requested
	running      bool // operationState Running
	opStarted    time.Time
	step, wait   string
	blocker      string // the first of its objects that is not Healthy
	shownBlocker string // the blocker last printed
	conditions   map[string]string
	reconciledAt time.Time
	destNS       string
	workloads    map[string]bool // "Kind namespace/name" of its objects
	syncedAt     time.Duration
	healthyAt    time.Duration
	createdAt    time.Duration    // first seen
	firstSyncAt  time.Duration    // first sync running; -1 before
	stalledAt    time.Duration    // SyncStalled condition set; -1 when not
	settledAt    time.Duration    // Synced, Healthy, no sync since; -1 when not
	children     map[string]int64 // child Applications in its resources, by wave
	synced       bool
	healthy      bool
	gone         bool
	// manual: automated sync is off, so an OutOfSync app waits for a
	// user to sync it; manualShown says the timeline said so.
	manual, manualShown bool
	// failed is the message of the last sync when it failed, else "".
	failed string
	// refused counts the syncs that ended failed because the API server
	// could not call an admission webhook.
	refused int
}

// podTrack is what the timeline knows about one Pod.
type podTrack struct {
	namespace, name string
	owner           string // "Kind namespace/name" of the workload running it
	restarts        int32
	ready           bool
	pending         string
	failed          bool
}

// Tracker turns watch events into timeline lines and keeps the state the
// settle decision, the judge and the summary read. It is used by one
// goroutine.
type Tracker struct {
	start      time.Time
	apps       map[string]*appTrack
	order      []string // apps by first sight
	pods       map[string]*podTrack
	lastChange time.Time
	// notes are the local cluster's notes printed, by event UID.
	notes map[types.UID]bool
}

// NewTracker returns a tracker whose times count from start, waiting for
// the root Applications named.
func NewTracker(start time.Time, roots []string) *Tracker {
	t := &Tracker{start: start, apps: map[string]*appTrack{}, pods: map[string]*podTrack{}, lastChange: start, notes: map[types.UID]bool{}}
	for _, r := range roots {
		t.apps[r] = newAppTrack(r, true)
		t.order = append(t.order, r)
	}
	return t
}

func newAppTrack(name string, root bool) *appTrack {
	return &appTrack{name: name, root: root, conditions: map[string]string{}, gone: true,
		syncedAt: -1, healthyAt: -1, createdAt: -1, firstSyncAt: -1, stalledAt: -1, settledAt: -1}
}

// Line is one timeline entry.
type Line struct {
	at   time.Duration
	text string
	// scale, when neither 0 nor 1, adds the time at full scale.
	scale float64
}

func (l Line) String() string {
	if l.scale == 0 || l.scale == 1 {
		return fmt.Sprintf("[%5.1fs] %s", l.at.Seconds(), l.text)
	}
	return fmt.Sprintf("[%5.1fs | %6.1fs] %s", l.at.Seconds(), l.at.Seconds()/l.scale, l.text)
}

// Observe records an event and returns the lines it is worth.
func (t *Tracker) Observe(o Observation) []Line {
	var texts []string
	switch {
	case o.app != nil:
		texts = t.observeApp(o)
	case o.pod != nil:
		texts = t.observePod(o)
	case o.note != nil:
		texts = t.observeNote(o)
	}
	if len(texts) == 0 {
		return nil
	}
	t.lastChange = o.at
	at := o.at.Sub(t.start)
	out := make([]Line, len(texts))
	for i, s := range texts {
		out[i] = Line{at: at, text: s}
	}
	return out
}

// observeNote prints each note of the local cluster once: what stands in
// for a pod's program, or why nothing does.
func (t *Tracker) observeNote(o Observation) []string {
	e := o.note
	if o.deleted || o.initial || t.notes[e.UID] {
		return nil
	}
	t.notes[e.UID] = true
	ref := e.InvolvedObject
	name := ref.Name
	if ref.Namespace != "" {
		name = ref.Namespace + "/" + name
	}
	return []string{fmt.Sprintf("%s %s: %s", strings.ToLower(ref.Kind), name, e.Message)}
}

// webhookRefusals counts the syncs a webhook without a ready endpoint
// failed, over every app.
func (t *Tracker) webhookRefusals() int {
	n := 0
	for _, a := range t.apps {
		n += a.refused
	}
	return n
}

func (t *Tracker) app(name string) *appTrack {
	a, ok := t.apps[name]
	if !ok {
		a = newAppTrack(name, false)
		t.apps[name] = a
		t.order = append(t.order, name)
	}
	return a
}

func (t *Tracker) observeApp(o Observation) []string {
	a := t.app(o.app.Name)
	prefix := func(s string) string { return fmt.Sprintf("%-8s %s", a.name, s) }
	if o.deleted {
		if a.gone {
			return nil
		}
		a.gone = true
		return []string{prefix("deleted")}
	}
	var out []string
	if a.gone {
		a.gone = false
		if a.createdAt < 0 {
			a.createdAt = o.at.Sub(t.start)
		}
		a.wave = ""
		if w, ok := hook.DeclaredWave(o.app); ok {
			a.wave = strconv.Itoa(w)
		}
		what := "created"
		if o.initial {
			what = "found from an earlier run"
		}
		if a.wave != "" {
			what += " (wave " + a.wave + ")"
		}
		out = append(out, prefix(what))
	}
	for _, s := range a.update(o.app, o.at.Sub(t.start)) {
		out = append(out, prefix(s))
	}
	return out
}

// update takes the app's new state and describes what changed.
func (a *appTrack) update(app *v1alpha1.Application, at time.Duration) []string {
	st := app.Status
	var out []string
	a.destNS = app.Spec.Destination.Namespace
	a.workloads = workloadsOf(st.Resources)
	if st.ReconciledAt != nil {
		a.reconciledAt = st.ReconciledAt.Time
	}
	a.operation = app.Operation != nil
	sync, health := string(st.Sync.Status), string(st.Health.Status)
	if (sync != a.sync || health != a.health) && (sync != "" || health != "") {
		s := orDash(sync) + "  " + orDash(health)
		if health == "Degraded" && st.Health.Message != "" {
			s += ": " + st.Health.Message
		}
		out = append(out, s)
	}
	a.sync, a.health, a.healthMsg = sync, health, st.Health.Message
	a.noteTransitions(at)
	out = append(out, a.updateOperation(st.OperationState)...)
	a.manual = !app.Spec.SyncPolicy.IsAutomated()
	if hint := a.manualSyncHint(); hint != "" && !a.manualShown {
		out = append(out, hint)
	}
	a.manualShown = a.manualSyncHint() != ""
	if a.running && a.firstSyncAt < 0 {
		a.firstSyncAt = at
	}
	out = append(out, a.updateBlocker(st.Resources)...)
	out = append(out, a.updateConditions(st.Conditions)...)
	a.noteRun(st.Resources, at)
	return out
}

// noteRun records when the app stalled and settled, and its children.
func (a *appTrack) noteRun(resources []v1alpha1.ResourceStatus, at time.Duration) {
	switch _, stalled := a.conditions[v1alpha1.ApplicationConditionSyncStalled]; {
	case stalled && a.stalledAt < 0:
		a.stalledAt = at
	case !stalled:
		a.stalledAt = -1
	}
	switch settled := a.synced && a.healthy && !a.running && !a.operation; {
	case settled && a.settledAt < 0:
		a.settledAt = at
	case !settled:
		a.settledAt = -1
	}
	a.children = map[string]int64{}
	for _, r := range resources {
		if r.Group == v1alpha1.Group && r.Kind == v1alpha1.ApplicationKind {
			a.children[r.Name] = r.SyncWave
		}
	}
}

// updateBlocker reports what an app that is not Healthy waits on outside
// a sync (a running sync reports its waits itself), once per blocker.
func (a *appTrack) updateBlocker(resources []v1alpha1.ResourceStatus) []string {
	a.blocker = ""
	if a.health != "Healthy" {
		a.blocker = firstBlocker(resources)
	}
	if a.blocker == "" {
		a.shownBlocker = ""
	}
	if a.blocker == "" || a.blocker == a.shownBlocker || a.running {
		return nil
	}
	a.shownBlocker = a.blocker
	return []string{orDash(a.health) + "  waits on " + a.blocker}
}

// firstBlocker describes the first object whose health is known and not
// Healthy: "StatefulSet app-a/redis: Progressing: Waiting for 1 pods".
func firstBlocker(resources []v1alpha1.ResourceStatus) string {
	for _, r := range resources {
		if r.Health == nil || r.Health.Status == "" || r.Health.Status == "Healthy" || r.Hook {
			continue
		}
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + name
		}
		s := r.Kind + " " + name + ": " + string(r.Health.Status)
		if r.Health.Message != "" {
			s += ": " + FirstLine(r.Health.Message)
		}
		return s
	}
	return ""
}

func (a *appTrack) noteTransitions(at time.Duration) {
	if synced := a.sync == string(v1alpha1.SyncStatusCodeSynced); synced != a.synced {
		a.synced = synced
		if synced {
			a.syncedAt = at
		}
	}
	if healthy := a.health == "Healthy"; healthy != a.healthy {
		a.healthy = healthy
		if healthy {
			a.healthyAt = at
		}
	}
}

// updateOperation reports sync starts, wave starts, what a wave waits on
// and how the sync ended.
func (a *appTrack) updateOperation(op *v1alpha1.OperationState) []string {
	if op == nil {
		a.running = false
		return nil
	}
	var out []string
	running := op.Phase == v1alpha1.OperationRunning
	if running && (!a.running || !op.StartedAt.Time.Equal(a.opStarted)) {
		a.step, a.wait = "", ""
		how := ""
		if op.Operation.InitiatedBy.Automated {
			how = " (automated)"
		}
		out = append(out, "sync started"+how)
	}
	if !running && a.running {
		if kube.WebhookCallFailed(op.Message) {
			a.refused++
		}
		msg := strings.ToLower(string(op.Phase))
		if op.Phase != v1alpha1.OperationSucceeded && op.Message != "" {
			msg += ": " + op.Message
		}
		out = append(out, "sync "+msg)
	}
	a.failed = ""
	if op.Phase == v1alpha1.OperationFailed || op.Phase == v1alpha1.OperationError {
		a.failed = cmp.Or(op.Message, "no message")
	}
	a.running, a.opStarted = running, op.StartedAt.Time
	if !running {
		return out
	}
	if step := application.ProgressOf(op).Step(); step != "" && step != a.step {
		a.step = step
		out = append(out, step+" starts")
	}
	if op.Message != a.wait {
		a.wait = op.Message
		if w, ok := strings.CutPrefix(op.Message, "waiting for "); ok {
			step := a.step
			if step == "" {
				step = "sync"
			}
			out = append(out, fmt.Sprintf("%s  %s waits on %s", orDash(a.health), step, w))
		} else if op.Message != "" && !strings.HasPrefix(op.Message, "successfully synced") {
			out = append(out, "sync: "+op.Message)
		}
	}
	return out
}

// manualSyncHint says how to sync an app that is OutOfSync, has no sync
// running or requested, no automated sync to start one and no failed sync
// to explain it; else "".
func (a *appTrack) manualSyncHint() string {
	if !a.manual || a.sync != string(v1alpha1.SyncStatusCodeOutOfSync) || a.running || a.operation || a.failed != "" {
		return ""
	}
	return fmt.Sprintf("OutOfSync and automated sync is off: nothing syncs it until you do: wavecd app sync %s --kubeconfig %s", a.name, kubeconfigHint)
}

// kubeconfigHint is the kubeconfig of up's cluster as a user in the
// repository's folder names it.
const kubeconfigHint = ".wavecd/kubeconfig"

func (a *appTrack) updateConditions(conds []v1alpha1.ApplicationCondition) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range conds {
		seen[c.Type] = true
		if a.conditions[c.Type] != c.Message {
			a.conditions[c.Type] = c.Message
			out = append(out, c.Type+": "+c.Message)
		}
	}
	var cleared []string
	for typ := range a.conditions {
		if !seen[typ] {
			cleared = append(cleared, typ)
			delete(a.conditions, typ)
		}
	}
	sort.Strings(cleared)
	for _, typ := range cleared {
		out = append(out, typ+" cleared")
	}
	return out
}

func workloadsOf(resources []v1alpha1.ResourceStatus) map[string]bool {
	out := map[string]bool{}
	for _, r := range resources {
		out[r.Kind+" "+r.Namespace+"/"+r.Name] = true
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
