package stages

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
)

func TestConfigHoldsEveryStage(t *testing.T) {
	pods := []string{"pod-create", "pod-init-containers", "pod-ready", "pod-complete", "pod-fail", "pod-delete"}
	tests := map[string]struct {
		opts  Options
		nodes []string
	}{
		"default":  {opts: Options{}, nodes: []string{"node-initialize", "node-heartbeat-with-lease"}},
		"CNI mode": {opts: Options{CNI: true}, nodes: []string{"node-cni-not-ready", "node-initialize", "node-heartbeat-with-lease"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range loadStages(t, tc.opts) {
				got = append(got, s.Name)
			}
			want := append(slices.Clone(tc.nodes), pods...)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("stages = %v, want %v", got, want)
			}
		})
	}
}

// loadStages parses the configuration as KWOK does.
func loadStages(t *testing.T, opts Options) []*internalversion.Stage {
	t.Helper()
	cfg, err := Config(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []*internalversion.Stage
	for _, doc := range strings.Split(cfg, "\n---\n") {
		obj, err := kwokconfig.Unmarshal(doc)
		if err != nil {
			t.Fatalf("stage does not parse: %v\n%s", err, doc)
		}
		s, ok := obj.(*internalversion.Stage)
		if !ok {
			t.Fatalf("document is a %T, want a Stage", obj)
		}
		out = append(out, s)
	}
	return out
}

// matching lists the stages of kind that would fire for obj.
func matching(t *testing.T, opts Options, kind string, obj metav1.Object) []string {
	t.Helper()
	var stages []*internalversion.Stage
	for _, s := range loadStages(t, opts) {
		if s.Spec.ResourceRef.Kind == kind {
			stages = append(stages, s)
		}
	}
	lc, err := lifecycle.NewLifecycle(stages)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lc.ListAllPossible(t.Context(), &lifecycle.Event{Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), Data: obj})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, s := range got {
		names = append(names, s.Name())
	}
	return names
}

type podState struct {
	phase   corev1.PodPhase
	podIP   string
	ready   corev1.ConditionStatus
	restart corev1.RestartPolicy
	annot   map[string]string
	deleted bool
}

func pod(s podState) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Annotations: s.annot},
		Spec: corev1.PodSpec{NodeName: "n", RestartPolicy: s.restart,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: s.phase, PodIP: s.podIP},
	}
	if s.deleted {
		p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1e9, 0)}
	}
	if s.podIP != "" {
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: s.ready},
		}
	}
	return p
}

func TestPodStageMatches(t *testing.T) {
	requires := map[string]string{RequiresAnnotation: "redis.ns:6379"}
	process := map[string]string{ProcessAnnotation: "karpenter"}
	tests := map[string]struct {
		pod  podState
		want []string
	}{
		"scheduled pod gets created": {podState{phase: corev1.PodPending, restart: corev1.RestartPolicyAlways}, []string{"pod-create"}},
		"initialised pod turns ready": {podState{phase: corev1.PodPending, podIP: "10.0.0.1", ready: "False", restart: corev1.RestartPolicyAlways},
			[]string{"pod-ready"}},
		"pod with required services is left to the controller": {podState{phase: corev1.PodPending, podIP: "10.0.0.1", ready: "False",
			restart: corev1.RestartPolicyAlways, annot: requires}, []string{}},
		"running ready pod is left alone": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True", restart: corev1.RestartPolicyAlways},
			[]string{}},
		"crash-looping pod is left alone": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "False", restart: corev1.RestartPolicyAlways, annot: requires},
			[]string{}},
		"crash-looping OnFailure pod does not complete": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "False", restart: corev1.RestartPolicyOnFailure, annot: requires},
			[]string{}},
		"ready run-to-completion pod completes": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True", restart: corev1.RestartPolicyNever},
			[]string{"pod-complete"}},
		"process-backed pod is left to the controller": {podState{phase: corev1.PodPending, podIP: "10.0.0.1", ready: "False",
			restart: corev1.RestartPolicyAlways, annot: process}, []string{}},
		"running process-backed Never pod does not complete": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True",
			restart: corev1.RestartPolicyNever, annot: process}, []string{}},
		"running process-backed pod annotated exit-code does not fail": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True",
			restart: corev1.RestartPolicyOnFailure, annot: map[string]string{ProcessAnnotation: "p", "localcluster.wavecd.io/exit-code": "1"}}, []string{}},
		"deleted pod goes away": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True",
			restart: corev1.RestartPolicyAlways, deleted: true}, []string{"pod-delete"}},
		"deleted process-backed pod waits for its process": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True",
			restart: corev1.RestartPolicyAlways, annot: process, deleted: true}, []string{}},
		"ready pod annotated exit-code fails": {podState{phase: corev1.PodRunning, podIP: "10.0.0.1", ready: "True", restart: corev1.RestartPolicyOnFailure,
			annot: map[string]string{"localcluster.wavecd.io/exit-code": "1"}}, []string{"pod-fail"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := matching(t, Options{}, "Pod", pod(tc.pod))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("matching stages = %v, want %v", got, tc.want)
			}
		})
	}
}

func node(annot map[string]string, ready corev1.ConditionStatus, reason string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: annot}}
	if ready != "" {
		n.Status.Phase = corev1.NodeRunning
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: reason}}
	}
	return n
}

func TestNodeStageMatches(t *testing.T) {
	cniReady := map[string]string{CNIReadyAnnotation: "true"}
	tests := map[string]struct {
		opts Options
		node *corev1.Node
		want []string
	}{
		"new node initialises":                     {Options{}, node(nil, "", ""), []string{"node-initialize"}},
		"ready node keeps a heartbeat":             {Options{}, node(nil, "True", "KubeletReady"), []string{"node-heartbeat-with-lease"}},
		"CNI mode: new node registers NotReady":    {Options{CNI: true}, node(nil, "", ""), []string{"node-cni-not-ready"}},
		"CNI mode: NotReady node stays so":         {Options{CNI: true}, node(nil, "False", "KubeletNotReady"), []string{}},
		"CNI mode: unreachable node reports again": {Options{CNI: true}, node(nil, "Unknown", "NodeStatusUnknown"), []string{"node-cni-not-ready"}},
		"CNI mode: annotated node turns Ready":     {Options{CNI: true}, node(cniReady, "False", "KubeletNotReady"), []string{"node-initialize"}},
		"CNI mode: annotated new node initialises": {Options{CNI: true}, node(cniReady, "", ""), []string{"node-initialize"}},
		"CNI mode: ready node keeps a heartbeat":   {Options{CNI: true}, node(cniReady, "True", "KubeletReady"), []string{"node-heartbeat-with-lease"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := matching(t, tc.opts, "Node", tc.node)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("matching stages = %v, want %v", got, tc.want)
			}
		})
	}
}
