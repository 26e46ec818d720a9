package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const groupsConfig = `nodeGroups:
- name: general
  count: 1
  cpu: "4"
  labels:
    tier: general
- name: fargate
  count: 1
  labels:
    eks.amazonaws.com/compute-type: fargate
  cniReady: true
  taints:
  - key: eks.amazonaws.com/compute-type
    value: fargate
    effect: NoSchedule
cni:
  agentSelector: k8s-app=calico-node
processes:
  sleeper:
    command: [/bin/sleep, "600"]
`

// TestCNIModeAndNodeGroups runs a cluster from a configuration file with a
// general group waiting for its CNI and a serverless-style group.
func TestCNIModeAndNodeGroups(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(groupsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", cfg)
	t.Run("node groups carry their labels and taints", func(t *testing.T) { testNodeGroups(t, c) })
	t.Run("nodes wait NotReady for a CNI agent", func(t *testing.T) { testCNIMode(t, c) })
}

func getNode(t *testing.T, c *localCluster, name string) *corev1.Node {
	t.Helper()
	n, err := c.client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func hasTaint(n *corev1.Node, key, value string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Value == value && t.Effect == effect {
			return true
		}
	}
	return false
}

func readyCondition(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func testNodeGroups(t *testing.T, c *localCluster) {
	nodes, err := c.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes, want general-0 and fargate-0", len(nodes.Items))
	}
	general, fargate := getNode(t, c, "general-0"), getNode(t, c, "fargate-0")
	if general.Labels["tier"] != "general" || general.Labels["localcluster.wavecd.io/node-group"] != "general" ||
		general.Labels["kubernetes.io/hostname"] != "general-0" {
		t.Errorf("general-0 labels = %v", general.Labels)
	}
	if cpu := general.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "4" {
		t.Errorf("general-0 cpu capacity = %s, want 4", cpu.String())
	}
	if fargate.Labels["eks.amazonaws.com/compute-type"] != "fargate" ||
		!hasTaint(fargate, "eks.amazonaws.com/compute-type", "fargate", corev1.TaintEffectNoSchedule) {
		t.Errorf("fargate-0 labels %v, taints %v", fargate.Labels, fargate.Spec.Taints)
	}
	eventually(t, 30*time.Second, "fargate-0 (annotated cni-ready) Ready", func() (bool, error) {
		return readyCondition(getNode(t, c, "fargate-0")).Status == corev1.ConditionTrue, nil
	})
}

func testCNIMode(t *testing.T, c *localCluster) {
	ctx := t.Context()
	general := getNode(t, c, "general-0")
	ready := readyCondition(general)
	if ready.Status != corev1.ConditionFalse || ready.Reason != "KubeletNotReady" ||
		!strings.Contains(ready.Message, "NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized") {
		t.Fatalf("general-0 Ready condition %+v, want False, KubeletNotReady, cni plugin not initialized", ready)
	}
	eventually(t, 30*time.Second, "general-0 tainted not-ready:NoSchedule", func() (bool, error) {
		return hasTaint(getNode(t, c, "general-0"), "node.kubernetes.io/not-ready", "", corev1.TaintEffectNoSchedule), nil
	})
	web := simplePod("web", nil, corev1.RestartPolicyAlways)
	if _, err := c.client.CoreV1().Pods("default").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both nodes are tainted: general-0 not-ready, fargate-0 by its group.
	eventually(t, 30*time.Second, "web unschedulable for untolerated taints", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
				return strings.Contains(cond.Message, "2 node(s) had untolerated taint"), fmt.Errorf("scheduler: %s", cond.Message)
			}
		}
		return false, nil
	})
	operator := onGeneral(processPod("default", "operator", "sleeper", corev1.RestartPolicyAlways), true)
	tolerant := onGeneral(simplePod("tolerant", nil, corev1.RestartPolicyAlways), false)
	for _, p := range []*corev1.Pod{operator, tolerant} {
		if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A kubelet without a CNI runs host-network pods (an operator that
	// creates the CNI agent), and holds the others ContainerCreating.
	waitProcessReady(t, c, "default", "operator", 0)
	eventually(t, 30*time.Second, "tolerant held ContainerCreating with NetworkNotReady", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "tolerant", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		if p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" || w == nil || w.Reason != "ContainerCreating" {
			return false, fmt.Errorf("phase %s, IP %q, state %+v", p.Status.Phase, p.Status.PodIP, p.Status.ContainerStatuses[0].State)
		}
		events, err := c.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=tolerant"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "NetworkNotReady" && strings.Contains(e.Message, "network is not ready: container runtime network not ready") {
				return true, nil
			}
		}
		return false, fmt.Errorf("no NetworkNotReady event among %d", len(events.Items))
	})
	createCNIAgent(t, c)
	eventually(t, 30*time.Second, "calico-node Running on NotReady general-0", func() (bool, error) {
		pods, err := c.client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=calico-node"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "general-0" && p.Status.Phase == corev1.PodRunning {
				return true, nil
			}
		}
		return false, nil
	})
	eventually(t, 30*time.Second, "general-0 Ready and untainted", func() (bool, error) {
		n := getNode(t, c, "general-0")
		return readyCondition(n).Status == corev1.ConditionTrue &&
			!hasTaint(n, "node.kubernetes.io/not-ready", "", corev1.TaintEffectNoSchedule), nil
	})
	eventually(t, 60*time.Second, "web Running on general-0", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "general-0" && p.Status.Phase == corev1.PodRunning, err
	})
	eventually(t, 30*time.Second, "tolerant Running with an address once general-0 is Ready", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("default").Get(ctx, "tolerant", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "", err
	})
}

// onGeneral binds p to general-0, tolerating its taints, on the host
// network or not.
func onGeneral(p *corev1.Pod, hostNetwork bool) *corev1.Pod {
	p.Spec.NodeName = "general-0"
	p.Spec.HostNetwork = hostNetwork
	p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	return p
}

// createCNIAgent creates a calico-node-like DaemonSet: host network,
// tolerating every taint.
func createCNIAgent(t *testing.T, c *localCluster) {
	t.Helper()
	labels := map[string]string{"k8s-app": "calico-node"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "calico-node", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: "calico-node", Image: "calico/node"}},
				},
			},
		},
	}
	if _, err := c.client.AppsV1().DaemonSets("kube-system").Create(t.Context(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestStartRejectsBadConfig: start refuses invalid configurations before
// anything runs, naming the field or flag.
func TestStartRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("nodeGroups:\n- name: a\n  count: 1\n  taints:\n  - key: k\n    effect: Never\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(groupsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"invalid taint effect":         {[]string{"--config", bad}, `nodeGroups[0].taints[0].effect: "Never" is not one of`},
		"--nodes with --config":        {[]string{"--config", good, "--nodes", "2"}, "--nodes and --config exclude each other"},
		"selector flag and file":       {[]string{"--config", good, "--cni-agent-selector", "a=b"}, "--cni-agent-selector and cni.agentSelector"},
		"selector flag does not parse": {[]string{"--cni-agent-selector", "a in b"}, "--cni-agent-selector:"},
		"process flag without command": {[]string{"--process", "karpenter"}, `--process "karpenter": want NAME=COMMAND`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clusterDir := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			out, err := cliResult(append([]string{"start", "--dir", clusterDir, "--detach"}, tc.args...)...)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("start %v: err %v, output %q; want a failure mentioning %q", tc.args, err, out, tc.want)
			}
			if _, err := os.Stat(filepath.Join(clusterDir, "state.json")); err == nil {
				t.Fatalf("a refused start wrote %s/state.json", clusterDir)
			}
		})
	}
}
