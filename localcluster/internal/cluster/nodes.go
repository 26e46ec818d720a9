package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeSpec describes the simulated nodes a cluster starts with.
type NodeSpec struct {
	Count  int
	CPU    string
	Memory string
	Pods   string
}

// NodeName is the name of the i-th simulated node.
func NodeName(i int) string { return fmt.Sprintf("wavecd-node-%d", i) }

func (s NodeSpec) node(i int) (*corev1.Node, error) {
	res := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: s.CPU, corev1.ResourceMemory: s.Memory, corev1.ResourcePods: s.Pods,
	} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		res[name] = q
	}
	name := NodeName(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{NodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "type": "kwok",
				"node.kubernetes.io/exclude-from-external-load-balancers": "",
			},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}, nil
}

// Validate checks the quantities before anything starts.
func (s NodeSpec) Validate() error {
	if s.Count < 0 {
		return fmt.Errorf("--nodes must be 0 or more, got %d", s.Count)
	}
	for flag, v := range map[string]string{"--node-cpu": s.CPU, "--node-memory": s.Memory, "--node-pods": s.Pods} {
		if _, err := resource.ParseQuantity(v); err != nil {
			return fmt.Errorf("%s %q: %w", flag, v, err)
		}
	}
	return nil
}

// ensureNodes creates the missing simulated nodes; existing ones are kept.
func ensureNodes(ctx context.Context, c kubernetes.Interface, s NodeSpec) error {
	for i := range s.Count {
		n, err := s.node(i)
		if err != nil {
			return err
		}
		_, err = c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
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
