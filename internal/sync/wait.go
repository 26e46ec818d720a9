package sync

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// targetKind is what a wait expects of an object.
type targetKind int

const (
	targetHealth targetKind = iota // an applied object: Healthy (or no check)
	targetHook                     // a hook: completed
	targetPrune                    // a pruned object: gone
	targetGone                     // an object of no task (an old hook): gone
)

// target is one object a wait watches.
type target struct {
	index int // into State.Tasks; -1 for targetGone
	ref   kube.Ref
	kind  targetKind
}

// update is what a watch saw of one object.
type update struct {
	key   string
	obj   *unstructured.Unstructured
	gone  bool
	pod   bool
	slice bool
	at    time.Time
}

// waiter holds what the watches of one wait have seen.
type waiter struct {
	e       *Executor
	st      *State
	targets []target
	objs    map[string]*unstructured.Unstructured
	gone    map[string]bool
	pods    map[string]*unstructured.Unstructured
	// services are the Services gated targets call; slices holds their
	// EndpointSlices, by namespace and name (see wait_gates.go).
	services []health.ServiceRef
	slices   map[string]*unstructured.Unstructured
	// stop, when closed, ends the wait at a safe point (nil: never).
	stop    <-chan struct{}
	message string
	stall   *stallClock
}

// waitStep waits until every task of a step is done, or one failed. The
// next step starts on the watch event that completes this one.
func (e *Executor) waitStep(ctx context.Context, st *State, step []int) error {
	at, err := e.wait(ctx, st, step, false, e.opts.Stop)
	if err != nil {
		return err
	}
	if failed := failedTasks(st, step); len(failed) > 0 {
		e.fail(ctx, st, failureMessage("one or more synchronization tasks completed unsuccessfully", st, failed))
		return nil
	}
	e.events.add(ctx, Event{Time: at, Type: EventWaveHealthy, SyncPhase: st.SyncPhase, Wave: st.Wave})
	st.Message, st.Stalled = "", ""
	if e.opts.WaveDelay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.opts.WaveDelay):
		}
	}
	return nil
}

// waitGone waits until the objects refs name are gone.
func (e *Executor) waitGone(ctx context.Context, refs []kube.Ref) error {
	w := &waiter{e: e, st: &State{}, objs: map[string]*unstructured.Unstructured{}, gone: map[string]bool{}, pods: map[string]*unstructured.Unstructured{}}
	for _, ref := range refs {
		w.targets = append(w.targets, target{index: -1, ref: ref, kind: targetGone})
	}
	_, err := w.run(ctx, true)
	return err
}

// wait waits for the tasks idx: until all are done, or (unless all) until
// one failed. It returns when the deciding watch event arrived, or with
// errStopWait once stop is closed and the sync may stop (safeToStop).
func (e *Executor) wait(ctx context.Context, st *State, idx []int, all bool, stop <-chan struct{}) (time.Time, error) {
	w := &waiter{e: e, st: st, objs: map[string]*unstructured.Unstructured{}, gone: map[string]bool{}, pods: map[string]*unstructured.Unstructured{}, stop: stop}
	for _, i := range idx {
		ts := st.Tasks[i]
		tg := target{index: i, ref: taskRef(ts)}
		switch {
		case ts.Phase == v1alpha1.TaskApplied:
			tg.kind = targetHealth
		case ts.Phase == v1alpha1.TaskRunning && ts.Type == v1alpha1.TaskHook:
			tg.kind = targetHook
		case ts.Phase == v1alpha1.TaskRunning && ts.Type == v1alpha1.TaskPrune:
			tg.kind = targetPrune
		default:
			continue
		}
		t := e.task(st, i)
		if t != nil && t.Live != nil && tg.kind != targetPrune && t.Live.GetName() == ts.Name && t.Live.GetResourceVersion() != "" {
			w.objs[objectKey(tg.ref)] = t.Live
		}
		if t != nil && tg.kind == targetHealth {
			w.gateOn(t.Object)
		}
		w.targets = append(w.targets, tg)
	}
	return w.run(ctx, all)
}

func taskRef(ts TaskState) kube.Ref {
	return kube.Ref{GVK: schema.GroupVersionKind{Group: ts.Group, Version: ts.Version, Kind: ts.Kind}, Namespace: ts.Namespace, Name: ts.Name}
}

// run evaluates the targets on what is known, then on every watch event,
// until they are decided.
func (w *waiter) run(ctx context.Context, all bool) (time.Time, error) {
	if w.evaluate(ctx, all) {
		return time.Now(), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan update, 1024)
	if err := w.watch(ctx, updates); err != nil {
		return time.Time{}, err
	}
	w.stall = newStallClock(w.e.opts.StallTimeout)
	defer w.stall.stop()
	stop, stopping := w.stop, false
	deadline, cancelDeadline := w.e.deadlineTimer()
	defer cancelDeadline()
	for {
		if stopping && safeToStop(w.st) {
			return time.Time{}, errStopWait
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-deadline:
			return time.Time{}, errDeadline
		case <-w.e.opts.Terminate:
			return time.Time{}, errTerminateWait
		case <-stop:
			stop, stopping = nil, true // closed: look again after each event
			continue
		case <-w.stall.C():
			if w.stall.due() {
				w.examineStall(ctx)
			}
		case u := <-updates:
			w.record(u)
			for drained := false; !drained; {
				select {
				case next := <-updates:
					w.record(next)
					u = next
				default:
					drained = true
				}
			}
			if w.evaluate(ctx, all) {
				return u.at, nil
			}
		}
	}
}

func (w *waiter) record(u update) {
	switch {
	case u.slice:
		w.recordSlice(u)
	case u.pod && u.gone:
		delete(w.pods, u.key)
	case u.pod:
		w.pods[u.key] = u.obj
	case u.gone:
		delete(w.objs, u.key)
		w.gone[u.key] = true
	default:
		w.objs[u.key] = u.obj
		delete(w.gone, u.key)
	}
}

// watch starts one list-and-watch per kind and namespace of the targets,
// and one of the pods of each namespace holding a workload.
func (w *waiter) watch(ctx context.Context, out chan<- update) error {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	names := map[group][]string{}
	podNamespaces := map[string]bool{}
	for _, tg := range w.targets {
		g := group{gvk: tg.ref.GVK, namespace: tg.ref.Namespace}
		names[g] = append(names[g], tg.ref.Name)
		if hasPods(tg.ref.GVK.GroupKind()) {
			podNamespaces[tg.ref.Namespace] = true
		}
	}
	for g, list := range names {
		ri, err := w.e.cluster.ResourceFor(g.gvk, g.namespace)
		if err != nil {
			return err
		}
		go listWatch(ctx, ri, watchSpec{gk: g.gvk.GroupKind(), namespace: g.namespace, names: list}, out)
	}
	for ns := range podNamespaces {
		ri, err := w.e.cluster.ResourceFor(podGVK, ns)
		if err != nil {
			return err
		}
		go listWatch(ctx, ri, watchSpec{gk: podGVK.GroupKind(), namespace: ns, pods: true}, out)
	}
	return w.watchSlices(ctx, out)
}

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// watchSpec says what one list-and-watch covers.
type watchSpec struct {
	gk        schema.GroupKind
	namespace string
	// names are the objects of interest; all when nil.
	names  []string
	pods   bool
	slices bool
}

// listWatch lists the objects named (all when names is nil), then watches
// them from the list's resource version, listing again when the watch ends.
func listWatch(ctx context.Context, ri dynamic.ResourceInterface, spec watchSpec, out chan<- update) {
	names, gk := spec.names, spec.gk
	opts := metav1.ListOptions{}
	if len(names) == 1 {
		opts.FieldSelector = "metadata.name=" + names[0]
	}
	wanted := map[string]bool{}
	for _, n := range names {
		wanted[n] = true
	}
	send := func(obj *unstructured.Unstructured, gone bool) {
		if names != nil && !wanted[obj.GetName()] {
			return
		}
		key := objectKey(kube.Ref{GVK: schema.GroupVersionKind{Group: gk.Group, Kind: gk.Kind}, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		select {
		case out <- update{key: key, obj: obj, gone: gone, pod: spec.pods, slice: spec.slices, at: time.Now()}:
		case <-ctx.Done():
		}
	}
	for ctx.Err() == nil {
		list, err := ri.List(ctx, opts)
		if err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		seen := map[string]bool{}
		for i := range list.Items {
			seen[list.Items[i].GetName()] = true
			send(&list.Items[i], false)
		}
		for n := range wanted {
			if !seen[n] {
				obj := &unstructured.Unstructured{}
				obj.SetName(n)
				obj.SetNamespace(spec.namespace)
				send(obj, true)
			}
		}
		watchFrom(ctx, ri, opts, list.GetResourceVersion(), send)
	}
}

func watchFrom(ctx context.Context, ri dynamic.ResourceInterface, opts metav1.ListOptions, rv string, send func(*unstructured.Unstructured, bool)) {
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	wi, err := ri.Watch(ctx, opts)
	if err != nil {
		sleep(ctx, 200*time.Millisecond)
		return
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				continue
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				send(obj, false)
			case watch.Deleted:
				send(obj, true)
			default: // bookmarks and errors change no object
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// evaluate decides every undecided target on what is known. It returns
// true when the wait is over.
func (w *waiter) evaluate(ctx context.Context, all bool) bool {
	done, failed := true, false
	var waiting []string
	for _, tg := range w.targets {
		key := objectKey(tg.ref)
		if tg.kind == targetGone {
			if !w.gone[key] {
				done = false
				waiting = append(waiting, "deletion of "+tg.ref.String())
			}
			continue
		}
		ts := &w.st.Tasks[tg.index]
		if ts.Phase.Terminal() {
			failed = failed || ts.Phase == v1alpha1.TaskFailed
			continue
		}
		phase, message := w.status(tg)
		if message != "" {
			ts.Message = message
		}
		switch phase {
		case v1alpha1.TaskSucceeded, v1alpha1.TaskPruned, v1alpha1.TaskFailed:
			w.decide(ctx, tg, phase)
			failed = failed || phase == v1alpha1.TaskFailed
		default:
			done = false
			waiting = append(waiting, message)
		}
	}
	if done || (failed && !all) {
		return true
	}
	w.report(ctx, waiting)
	return false
}

// decide records a target's final phase; a hook is released from the hook
// finalizer now that its result is read.
func (w *waiter) decide(ctx context.Context, tg target, phase v1alpha1.TaskPhase) {
	ts := &w.st.Tasks[tg.index]
	ts.Phase = phase
	w.st.stamp(time.Now()) // the moment the deciding event arrived, not the step's end
	typ := EventTaskDone
	if phase == v1alpha1.TaskFailed {
		typ = EventTaskFailed
	}
	if tg.kind == targetHook {
		if err := w.e.cluster.RemoveFinalizer(ctx, tg.ref, FinalizerHook); err != nil {
			ts.Message = strings.TrimSpace(ts.Message + "; failed to remove hook finalizer: " + err.Error())
		}
	}
	w.e.events.add(ctx, Event{Type: typ, SyncPhase: ts.SyncPhase, Wave: ts.Wave, Task: ts.ID, Message: ts.Message})
}

// report publishes what the wait waits on, when that changed.
func (w *waiter) report(ctx context.Context, waiting []string) {
	const shown = 3
	message := "waiting for " + strings.Join(waiting[:min(len(waiting), shown)], " | ")
	if len(waiting) > shown {
		message += fmt.Sprintf(" | and %d more", len(waiting)-shown)
	}
	if message == w.message {
		return
	}
	w.message = message
	if w.stall != nil {
		w.stall.moved()
	}
	if w.st.ID == "" {
		return
	}
	w.st.Message, w.st.Stalled = message, ""
	w.e.events.add(ctx, Event{Type: EventWaiting, SyncPhase: w.st.SyncPhase, Wave: w.st.Wave, Message: message})
	w.e.progress(w.st)
}

// status decides one target from its live object: the phase it reached
// (running while undecided) and a message.
func (w *waiter) status(tg target) (v1alpha1.TaskPhase, string) {
	key := objectKey(tg.ref)
	switch {
	case w.gone[key] && tg.kind == targetPrune:
		return v1alpha1.TaskPruned, ""
	case w.gone[key]:
		return v1alpha1.TaskFailed, tg.ref.String() + " is missing, it might have been deleted"
	case tg.kind == targetPrune:
		return v1alpha1.TaskRunning, "deletion of " + tg.ref.String()
	}
	obj := w.objs[key]
	if obj == nil {
		return v1alpha1.TaskRunning, tg.ref.String() + ": no state observed yet"
	}
	h := w.e.health.AssessWith(obj, w.endpoints())
	switch {
	case h.Status == "" || h.Status == health.Healthy:
		return v1alpha1.TaskSucceeded, h.Message
	case h.Status == health.Degraded || (tg.kind == targetHook && h.Status == health.Unknown):
		return v1alpha1.TaskFailed, h.Message
	}
	return v1alpha1.TaskRunning, w.explain(tg.ref, obj, h)
}
