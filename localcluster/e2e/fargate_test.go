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
	"k8s.io/utils/ptr"
)

// fargateConfig is an EKS cluster with no EC2 node yet: two Fargate nodes
// for the karpenter namespace.
const fargateConfig = `nodeGroups:
- name: fargate
  count: 2
  fargateProfile:
    selectors:
    - namespace: karpenter
    - namespace: kube-system
      labels: {k8s-app: kube-dns}
cni:
  agentSelector: k8s-app=calico-node
`

// TestFargateProfile: pods the profile selects run on the Fargate nodes,
// one each; nothing else lands there, whatever it tolerates: a Deployment
// tolerating every taint stays Pending, as on EKS without EC2 nodes, and
// a DaemonSet's pods for the Fargate nodes never run.
func TestFargateProfile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(fargateConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", cfg)
	ctx := t.Context()
	n := getNode(t, c, "fargate-0")
	if n.Labels["eks.amazonaws.com/compute-type"] != "fargate" || !hasTaint(n, "eks.amazonaws.com/compute-type", "fargate", corev1.TaintEffectNoSchedule) ||
		readyCondition(n).Status != corev1.ConditionTrue || n.Status.Allocatable.Pods().Value() != 1 {
		t.Fatalf("fargate-0: labels %v, taints %v, ready %s, pods %s; want EKS's label and taint, Ready, 1 pod",
			n.Labels, n.Spec.Taints, readyCondition(n).Status, n.Status.Allocatable.Pods())
	}
	createNamespace(t, c, "karpenter")
	tolerant := func(name, ns string, replicas int32) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{{Name: name, Image: "example/" + name}},
				}}},
		}
	}
	karpenter := tolerant("karpenter", "karpenter", 2)
	karpenter.Spec.Template.Spec.Tolerations = nil // Fargate's scheduler places it all the same
	for _, d := range []*appsv1.Deployment{karpenter, tolerant("operator", "default", 1)} {
		if _, err := c.client.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "both karpenter pods Running, one per Fargate node", func() (bool, error) {
		pods, err := c.client.CoreV1().Pods("karpenter").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		nodes := map[string]bool{}
		for _, p := range pods.Items {
			if p.Spec.SchedulerName != "fargate-scheduler" {
				return false, fmt.Errorf("pod %s: scheduler %q", p.Name, p.Spec.SchedulerName)
			}
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "fargate-") {
				nodes[p.Spec.NodeName] = true
			}
		}
		return len(nodes) == 2, nil
	})
	eventually(t, 30*time.Second, "the tolerant operator Pending: no node for the default scheduler", func() (bool, error) {
		pods, err := c.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=operator"})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}
		p := pods.Items[0]
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable && p.Spec.NodeName == "" {
				return strings.Contains(cond.Message, "didn't match scheduler-enforced node affinity"), fmt.Errorf("scheduler: %s", cond.Message)
			}
		}
		return false, fmt.Errorf("pod on %q, phase %s", p.Spec.NodeName, p.Status.Phase)
	})
}
