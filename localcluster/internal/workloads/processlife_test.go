package workloads

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// initialisedPod is a pod as the simulated kubelet hands it to the process
// controller: initialised, its container waiting.
func initialisedPod(restart corev1.RestartPolicy, at time.Time) *corev1.Pod {
	t := metav1.NewTime(at)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "demo", UID: "u1"},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending, PodIP: "10.244.0.5",
			Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}},
		},
	}
}

// podIn builds a process-backed pod in a lifecycle state.
func podIn(state string, restart corev1.RestartPolicy) *corev1.Pod {
	p := initialisedPod(restart, t0)
	p.Annotations = map[string]string{"localcluster.wavecd.io/process": "tool"}
	cs := &p.Status.ContainerStatuses[0]
	switch state {
	case "scheduled": // KWOK has not created it yet
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	case "running":
		p.Status.Phase = corev1.PodRunning
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
		cs.Ready, cs.ContainerID = true, "process://100"
	case "back-off":
		p.Status.Phase = corev1.PodRunning
		cs.RestartCount = 2
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: kubelet.ReasonCrashLoopBackOff}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, FinishedAt: metav1.NewTime(t0)}}
	case "succeeded":
		p.Status.Phase = corev1.PodSucceeded
	}
	return p
}

func deleting(p *corev1.Pod, finalizers ...string) *corev1.Pod {
	p.DeletionTimestamp, p.Finalizers = &metav1.Time{Time: t0}, finalizers
	return p
}

// outcome summarises a step for comparison.
type outcome struct {
	Action      processAction
	After       time.Duration
	Restart     bool
	Phase       corev1.PodPhase
	Restarts    int32
	Ready       bool
	Waiting     string
	Running     bool
	ExitCode    int32
	ContainerID string
	Events      []string
}

func summarise(st processStep) outcome {
	o := outcome{Action: st.action, After: st.after, Restart: st.restart}
	for _, e := range st.events {
		o.Events = append(o.Events, e.Reason)
	}
	if st.status == nil {
		return o
	}
	cs := st.status.ContainerStatuses[0]
	o.Phase, o.Restarts, o.Ready, o.Running, o.ContainerID = st.status.Phase, cs.RestartCount, cs.Ready, cs.State.Running != nil, cs.ContainerID
	if cs.State.Waiting != nil {
		o.Waiting = cs.State.Waiting.Reason
	}
	if term := cs.State.Terminated; term != nil {
		o.ExitCode = term.ExitCode
	} else if term := cs.LastTerminationState.Terminated; term != nil {
		o.ExitCode = term.ExitCode
	}
	return o
}

func TestPlanProcess(t *testing.T) {
	always, never, onFailure := corev1.RestartPolicyAlways, corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure
	running := procView{running: true, started: t0, containerID: "process://100"}
	exited := func(code int32) procView {
		return procView{exit: &kubelet.Exit{Code: code, Reason: kubelet.ReasonError}, finished: t0.Add(5 * time.Second)}
	}
	b := kubelet.Backoff{Base: time.Second, Max: 30 * time.Second}
	tests := map[string]struct {
		pod       *corev1.Pod
		view      procView
		nodeReady bool
		now       time.Time
		want      outcome
	}{
		"deleted pod: stop its process":               {pod: deleting(podIn("running", always)), view: running, want: outcome{Action: actStop}},
		"deleted pod whose process stopped: remove":   {pod: deleting(podIn("running", always)), want: outcome{Action: actRemove}},
		"deleted pod with finalizers: wait":           {pod: deleting(podIn("running", always), "x"), want: outcome{Action: actWait}},
		"not created by KWOK yet: wait":               {pod: podIn("scheduled", always), nodeReady: true, want: outcome{Action: actWait}},
		"pod ended elsewhere: stop its process":       {pod: podIn("succeeded", always), view: running, want: outcome{Action: actStop}},
		"initialised, node NotReady: wait":            {pod: podIn("initialised", always), want: outcome{Action: actWait}},
		"initialised, node Ready: start":              {pod: podIn("initialised", always), nodeReady: true, want: outcome{Action: actStart}},
		"running without a process: start, a restart": {pod: podIn("running", always), nodeReady: true, want: outcome{Action: actStart, Restart: true}},
		"started process: show it running and ready": {pod: podIn("initialised", always), view: running, want: outcome{
			Action: actStatus, Phase: corev1.PodRunning, Ready: true, Running: true, ContainerID: "process://100"}},
		"running process shown: nothing to do": {pod: podIn("running", always), view: running, want: outcome{Action: actWait}},
		"exit under Always: back-off": {pod: podIn("running", always), view: exited(3), want: outcome{
			Action: actStatus, After: time.Second, Phase: corev1.PodRunning, Restarts: 1, Waiting: kubelet.ReasonCrashLoopBackOff,
			ExitCode: 3, ContainerID: "process://100", Events: []string{"Failed", "BackOff"}}},
		"exit 0 under Always: back-off too": {pod: podIn("running", always), view: exited(0), want: outcome{
			Action: actStatus, After: time.Second, Phase: corev1.PodRunning, Restarts: 1, Waiting: kubelet.ReasonCrashLoopBackOff,
			ContainerID: "process://100", Events: []string{"Completed", "BackOff"}}},
		"exit 2 under Never: Failed": {pod: podIn("running", never), view: exited(2), want: outcome{
			Action: actStatus, Phase: corev1.PodFailed, ExitCode: 2, ContainerID: "process://100", Events: []string{"Failed"}}},
		"exit 0 under OnFailure: Succeeded": {pod: podIn("running", onFailure), view: exited(0), want: outcome{
			Action: actStatus, Phase: corev1.PodSucceeded, ContainerID: "process://100", Events: []string{"Completed"}}},
		"exit 1 under OnFailure: back-off": {pod: podIn("running", onFailure), view: exited(1), want: outcome{
			Action: actStatus, After: time.Second, Phase: corev1.PodRunning, Restarts: 1, Waiting: kubelet.ReasonCrashLoopBackOff,
			ExitCode: 1, ContainerID: "process://100", Events: []string{"Failed", "BackOff"}}},
		"back-off not over: wait for the rest": {pod: podIn("back-off", always), view: procView{finished: t0}, nodeReady: true,
			now: t0.Add(500 * time.Millisecond), want: outcome{Action: actWait, After: 1500 * time.Millisecond}},
		"back-off over: start again": {pod: podIn("back-off", always), view: procView{finished: t0}, nodeReady: true,
			now: t0.Add(2 * time.Second), want: outcome{Action: actStart}},
		"back-off of an unseen exit counts from the status time, rounded up": {pod: podIn("back-off", always), nodeReady: true,
			now: t0.Add(2 * time.Second), want: outcome{Action: actWait, After: time.Second}},
		"back-off over, node NotReady: wait": {pod: podIn("back-off", always), view: procView{finished: t0},
			now: t0.Add(time.Minute), want: outcome{Action: actWait}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := summarise(planProcess(tc.pod, tc.view, tc.nodeReady, b, tc.now))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("step (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProcessRunningStatusCountsAnUnseenExit(t *testing.T) {
	p := podIn("running", corev1.RestartPolicyAlways)
	st := processRunningStatus(p, t0.Add(time.Minute), "process://200", true)
	cs := st.ContainerStatuses[0]
	got := []any{cs.RestartCount, cs.ContainerID, cs.State.Running.StartedAt.Time, cs.LastTerminationState.Terminated.ContainerID,
		cs.LastTerminationState.Terminated.Reason}
	want := []any{int32(1), "process://200", t0.Add(time.Minute), "process://100", "Unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("restarted status (-want +got):\n%s", diff)
	}
}

func TestOnNodeBringsBackPodsOnlyWhenTheNodeTurnsReady(t *testing.T) {
	node := func(ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	notReady, ready := node(corev1.ConditionFalse), node(corev1.ConditionTrue)
	onNode := func(p *corev1.Pod, name, nodeName string) *corev1.Pod {
		p.Name, p.Spec.NodeName = name, nodeName
		return p
	}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range []*corev1.Pod{
		onNode(podIn("initialised", corev1.RestartPolicyAlways), "process", "n1"),
		onNode(podIn("initialised", corev1.RestartPolicyAlways), "elsewhere", "n2"),
		onNode(initialisedPod(corev1.RestartPolicyAlways, t0), "not-a-process", "n1"),
	} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]struct {
		event []any // old and new, or the added node
		want  []string
	}{
		"added Ready":     {event: []any{ready}, want: []string{"demo/process"}},
		"added NotReady":  {event: []any{notReady}},
		"turned Ready":    {event: []any{notReady, ready}, want: []string{"demo/process"}},
		"Ready already":   {event: []any{ready, ready}},
		"turned NotReady": {event: []any{ready, notReady}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := &processController{pods: corelisters.NewPodLister(pods), queue: newQueue("test")}
			defer c.queue.ShutDown()
			if len(tc.event) == 1 {
				c.onNode(nil, tc.event[0])
			} else {
				c.onNode(tc.event[0], tc.event[1])
			}
			var got []string
			for c.queue.Len() > 0 {
				key, _ := c.queue.Get()
				got = append(got, key)
				c.queue.Done(key)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("queued pods (-want +got):\n%s", diff)
			}
		})
	}
}
