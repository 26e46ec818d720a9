package notify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// wavecdFuncs is the wavecd namespace of triggers and templates: what an
// Argo CD app does not say by itself.
//
//	wavecd.Stall()           the SyncStalled condition, read (Stall)
//	wavecd.DependencyWait()  the DependencyWait condition and its age
//	wavecd.Bootstrap()       a root app of apps and its descendants
func wavecdFuncs(app map[string]any, env Env, now func() time.Time) map[string]any {
	typed := func() *v1alpha1.Application { return toApp(app) }
	return map[string]any{
		"Stall":          func() Stall { return StallOf(typed()) },
		"DependencyWait": func() DependencyWait { return DependencyWaitOf(typed(), now()) },
		"Bootstrap": func() Bootstrap {
			var all []*v1alpha1.Application
			if env.Apps != nil {
				all = env.Apps()
			}
			return BootstrapOf(typed(), all)
		},
	}
}

func toApp(obj map[string]any) *v1alpha1.Application {
	app := &v1alpha1.Application{}
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(obj, app)
	return app
}

// Stall is an app's SyncStalled condition, read: a wave made no progress
// and pods it waits on cannot be scheduled.
type Stall struct {
	// Stalled is set while the app carries the condition.
	Stalled bool
	// Message is the condition's message as the controller wrote it.
	Message string
	// Since is when the condition last changed.
	Since time.Time
	// Step is the blocked step: "wave 0", "PreSync wave 1".
	Step string
	// Object is the first object the step waits on, through the child
	// Applications it is reached by: "Deployment calico-system/tigera-operator".
	Object string
	// Through is the child Application the stall is seen through, when the
	// blocked object is not the app's own.
	Through string
	// Pod is the first pod the scheduler cannot place, Reason why.
	Pod, Reason string
	// Provisioner says where the node provisioners are: "no node
	// provisioner is running; karpenter is in wave 1 of root".
	Provisioner string
	// Origin is set when the app's own objects are blocked: an app of
	// apps waiting on a stalled child is stalled too, but not the origin.
	Origin bool
}

// StallOf reads an app's SyncStalled condition.
func StallOf(app *v1alpha1.Application) Stall {
	c := application.Condition(app, v1alpha1.ApplicationConditionSyncStalled)
	if c == nil {
		return Stall{}
	}
	s := Stall{Stalled: true, Message: c.Message}
	if c.LastTransitionTime != nil {
		s.Since = c.LastTransitionTime.Time
	}
	msg := strings.TrimPrefix(c.Message, "stalled: ")
	step, rest, ok := strings.Cut(msg, " of ")
	if !ok {
		s.Origin = true
		return s
	}
	s.Step = step
	if _, rest, ok = strings.Cut(rest, " waits on "); !ok {
		s.Origin = true
		return s
	}
	blocked, after, _ := strings.Cut(rest, " Pending: ")
	if i := strings.LastIndex(blocked, ": pod "); i >= 0 {
		s.Object, s.Pod = blocked[:i], blocked[i+len(": pod "):]
	} else {
		s.Object = blocked
	}
	s.Reason, s.Provisioner, _ = strings.Cut(after, "; ")
	if i := strings.Index(s.Reason, ", and on "); i >= 0 {
		s.Reason = s.Reason[:i]
	}
	if strings.HasPrefix(s.Object, "Application ") {
		child, object, _ := strings.Cut(strings.TrimPrefix(s.Object, "Application "), ": ")
		s.Through, s.Object = child, object
	}
	s.Origin = s.Through == ""
	return s
}

// DependencyWait is an app's DependencyWait condition (wavecd.io/depends-on
// not Synced and Healthy yet) and how long it has held.
type DependencyWait struct {
	Waiting bool
	Message string
	Since   time.Time
	// For is how long the condition has held unchanged.
	For time.Duration
}

// DependencyWaitOf reads an app's DependencyWait condition at now.
func DependencyWaitOf(app *v1alpha1.Application, now time.Time) DependencyWait {
	c := application.Condition(app, v1alpha1.ApplicationConditionDependencyWait)
	if c == nil {
		return DependencyWait{}
	}
	w := DependencyWait{Waiting: true, Message: c.Message}
	if c.LastTransitionTime != nil {
		w.Since = c.LastTransitionTime.Time
		w.For = now.Sub(w.Since).Round(time.Second)
	}
	return w
}

// Bootstrap is what an app of apps and its descendants did.
type Bootstrap struct {
	// Root is set for an app with child Applications and no parent.
	Root bool
	// Complete is set when Root and the app and every descendant are
	// Synced and Healthy, with no sync running and the last one
	// succeeded; a descendant that follows the root's repository and
	// revision must have been compared with the root's commit.
	Complete bool
	// Apps lists the descendants, sorted.
	Apps []string
	// Started is when the root's sync started; Finished when the last of
	// them turned Healthy or ended its sync; WallTime between the two.
	Started, Finished time.Time
	WallTime          time.Duration
	// Waves are the child waves of every app of apps, in order.
	Waves []WaveTime
	// Slowest is the longest of Waves.
	Slowest WaveTime
}

// WaveTime is how long one wave of child Applications took: from the end
// of the wave before (or the parent's sync start) to the last of its apps
// turning Healthy.
type WaveTime struct {
	Parent string
	Wave   int64
	Apps   []string
	Took   time.Duration
}

func (w WaveTime) String() string {
	if w.Parent == "" {
		return ""
	}
	return fmt.Sprintf("wave %d of %s (%s, %s)", w.Wave, w.Parent, strings.Join(w.Apps, ", "), w.Took.Round(100*time.Millisecond))
}

// BootstrapOf describes app as the root of an app of apps, among all the
// apps of its namespace.
func BootstrapOf(app *v1alpha1.Application, all []*v1alpha1.Application) Bootstrap {
	byName := map[string]*v1alpha1.Application{}
	for _, a := range all {
		if a.Namespace == app.Namespace {
			byName[a.Name] = a
		}
	}
	byName[app.Name] = app
	for _, a := range byName {
		if slices.ContainsFunc(childWaves(a), func(c childApp) bool { return c.name == app.Name }) {
			return Bootstrap{}
		}
	}
	if len(childWaves(app)) == 0 {
		return Bootstrap{}
	}
	b := Bootstrap{Root: true, Complete: settled(app)}
	b.Started = operationStart(app)
	b.Finished = b.Started
	seen := map[string]bool{app.Name: true}
	queue := []*v1alpha1.Application{app}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		waves, end := waveTimes(parent, byName, operationStart(parent))
		b.Waves = append(b.Waves, waves...)
		b.Finished = later(b.Finished, end)
		for _, c := range childWaves(parent) {
			child := byName[c.name]
			if seen[c.name] {
				continue
			}
			seen[c.name] = true
			b.Apps = append(b.Apps, c.name)
			if child == nil || !settled(child) || behind(child, app) {
				b.Complete = false
			}
			if child != nil {
				queue = append(queue, child)
			}
		}
	}
	slices.Sort(b.Apps)
	b.Finished = later(b.Finished, settledAt(app))
	b.WallTime = b.Finished.Sub(b.Started)
	for _, w := range b.Waves {
		if w.Took > b.Slowest.Took || b.Slowest.Parent == "" {
			b.Slowest = w
		}
	}
	return b
}

// childApp is a child Application an app lists in its resources.
type childApp struct {
	name string
	wave int64
}

func childWaves(a *v1alpha1.Application) []childApp {
	var out []childApp
	for _, r := range a.Status.Resources {
		if r.Group == v1alpha1.Group && r.Kind == v1alpha1.ApplicationKind && (r.Namespace == "" || r.Namespace == a.Namespace) {
			out = append(out, childApp{name: r.Name, wave: r.SyncWave})
		}
	}
	return out
}

// waveTimes times parent's child waves, the first from start, and returns
// when the last one ended.
func waveTimes(parent *v1alpha1.Application, apps map[string]*v1alpha1.Application, start time.Time) ([]WaveTime, time.Time) {
	byWave := map[int64][]string{}
	for _, c := range childWaves(parent) {
		byWave[c.wave] = append(byWave[c.wave], c.name)
	}
	var out []WaveTime
	end := start
	for _, w := range slices.Sorted(maps.Keys(byWave)) {
		names := byWave[w]
		slices.Sort(names)
		waveEnd := end
		for _, n := range names {
			if a := apps[n]; a != nil {
				waveEnd = later(waveEnd, settledAt(a))
			}
		}
		out = append(out, WaveTime{Parent: parent.Name, Wave: w, Apps: names, Took: waveEnd.Sub(end)})
		end = waveEnd
	}
	return out, end
}

// settled reports whether an app is Synced and Healthy with no operation
// running, and its last sync, if any, succeeded.
func settled(a *v1alpha1.Application) bool {
	if a.Operation != nil || (a.Status.OperationState != nil && a.Status.OperationState.Phase != v1alpha1.OperationSucceeded) {
		return false
	}
	return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == "Healthy"
}

// behind reports whether a child that follows the root's repository and
// revision was last compared with another commit than the root: the root
// saw a new commit its child has not been compared with yet.
func behind(child, root *v1alpha1.Application) bool {
	cs, rs := child.Spec.Source, root.Spec.Source
	if cs == nil || rs == nil || cs.RepoURL != rs.RepoURL || cs.TargetRevision != rs.TargetRevision {
		return false
	}
	return child.Status.Sync.Revision != root.Status.Sync.Revision
}

// settledAt is when an app last turned Healthy or ended a sync.
func settledAt(a *v1alpha1.Application) time.Time {
	var t time.Time
	if h := a.Status.Health.LastTransitionTime; h != nil {
		t = h.Time
	}
	if st := a.Status.OperationState; st != nil && st.FinishedAt != nil {
		t = later(t, st.FinishedAt.Time)
	}
	return t
}

// operationStart is when an app's last sync started, or its creation.
func operationStart(a *v1alpha1.Application) time.Time {
	if st := a.Status.OperationState; st != nil && !st.StartedAt.IsZero() {
		return st.StartedAt.Time
	}
	return a.CreationTimestamp.Time
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
