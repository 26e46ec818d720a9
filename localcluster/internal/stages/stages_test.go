package stages

import (
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
	tests := map[string]struct {
		opts  Options
		nodes []string
	}{
		"default":  {opts: Options{}, nodes: []string{"node-initialize", "node-heartbeat-with-lease"}},
		"CNI mode": {opts: Options{CNI: true}, nodes: []string{"node-cni-not-ready", "node-initialize", "node-heartbeat-with-lease"}},
		"node start-up": {opts: Options{NodeStartup: 5 * time.Second},
			nodes: []string{"node-initialize", "node-initialize-provisioned", "node-heartbeat-with-lease"}},
		"CNI mode and node start-up": {opts: Options{CNI: true, NodeStartup: 5 * time.Second},
			nodes: []string{"node-cni-not-ready", "node-cni-not-ready-provisioned", "node-initialize", "node-heartbeat-with-lease"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range loadStages(t, tc.opts) {
				got = append(got, s.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.nodes, ",") {
				t.Fatalf("stages = %v, want %v", got, tc.nodes)
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

func node(annot map[string]string, ready corev1.ConditionStatus, reason string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: annot, Labels: map[string]string{NodeGroupLabel: "g"}}}
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
		"start-up: own node initialises at once":   {Options{NodeStartup: time.Second}, node(nil, "", ""), []string{"node-initialize"}},
		"start-up: provisioned node waits":         {Options{NodeStartup: time.Second}, provisioned(node(nil, "", "")), []string{"node-initialize-provisioned"}},
		"CNI start-up: provisioned node registers later": {Options{CNI: true, NodeStartup: time.Second}, provisioned(node(nil, "", "")),
			[]string{"node-cni-not-ready-provisioned"}},
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

// provisioned makes n a node another component created.
func provisioned(n *corev1.Node) *corev1.Node {
	n.Labels = nil
	return n
}

func TestProvisionedNodesWait(t *testing.T) {
	cfg, err := Config(Options{NodeStartup: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg, "durationMilliseconds: 1500") {
		t.Fatalf("no 1500ms delay in the stages:\n%s", cfg)
	}
}
