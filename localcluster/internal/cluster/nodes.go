package cluster

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// NodeGroupLabel names the node group a simulated node belongs to.
const NodeGroupLabel = stages.NodeGroupLabel

// fallbackNodeIP is the InternalIP KWOK gives nodes created without one
// (by a provisioner such as Karpenter); the cluster's own nodes get
// distinct addresses from nodeIP.
const fallbackNodeIP = "10.0.255.254"

// nodeIP is the InternalIP of the n-th node the cluster creates (n >= 0),
// in 10.0.0.0/16. Host-network pods get their node's address as pod IP.
func nodeIP(n int) string { return fmt.Sprintf("10.0.%d.%d", (n+1)/256%255, (n+1)%256) }

// groupNode builds the i-th node of a validated group with address ip.
func groupNode(g config.NodeGroup, i int, ip string) (*corev1.Node, error) {
	res := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: g.CPU, corev1.ResourceMemory: g.Memory, corev1.ResourcePods: g.Pods,
	} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("node group %s: %s: %w", g.Name, name, err)
		}
		res[name] = q
	}
	name := g.NodeName(i)
	labels := map[string]string{
		"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
		"node.kubernetes.io/exclude-from-external-load-balancers": "",
	}
	maps.Copy(labels, g.Labels)
	labels["kubernetes.io/hostname"] = name
	labels[NodeGroupLabel] = g.Name
	if g.FargateProfile != nil {
		labels[config.SchedulerLabel] = config.FargateScheduler
	}
	annotations := map[string]string{}
	maps.Copy(annotations, g.Annotations)
	annotations[NodeAnnotation] = "fake"
	if g.CNIReady {
		annotations[stages.CNIReadyAnnotation] = "true"
	}
	var taints []corev1.Taint
	for _, t := range g.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res, Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name},
		}},
	}, nil
}

// ensureNodes creates the missing simulated nodes; existing ones are kept.
func ensureNodes(ctx context.Context, c kubernetes.Interface, groups []config.NodeGroup) error {
	seq := 0
	for _, g := range groups {
		for i := range g.Count {
			n, err := groupNode(g, i, nodeIP(seq))
			seq++
			if err != nil {
				return err
			}
			_, err = c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}

func readyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	c := readyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

// countReadyNodes returns the ready and total node counts.
func countReadyNodes(ctx context.Context, c kubernetes.Interface) (ready, total int, err error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("list nodes: %w", err)
	}
	for i := range list.Items {
		if nodeReady(&list.Items[i]) {
			ready++
		}
	}
	return ready, len(list.Items), nil
}

// releaseNodeLeases deletes the node leases a previous run's KWOK held.
// KWOK takes a new identity at each start and would otherwise wait for
// them to expire (40 s) before it manages the nodes and their pods again.
func releaseNodeLeases(ctx context.Context, c kubernetes.Interface) error {
	err := c.CoordinationV1().Leases(corev1.NamespaceNodeLease).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release node leases of the previous run: %w", err)
	}
	return nil
}
