package cluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func apiServerReady(c kubernetes.Interface) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		body, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", err
	}
}

func nodesReady(c kubernetes.Interface, want int) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		ready, _, err := countReadyNodes(ctx, c)
		return err == nil && ready >= want, err
	}
}

// nodesReporting holds once want nodes report a Ready condition, whatever
// its status: in CNI mode nodes start NotReady.
func nodesReporting(c kubernetes.Interface, want int) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, fmt.Errorf("list nodes: %w", err)
		}
		n := 0
		for i := range list.Items {
			if readyCondition(&list.Items[i]) != nil {
				n++
			}
		}
		return n >= want, nil
	}
}

// defaultServiceAccount holds once the controller-manager has created the
// default ServiceAccount, which pods in the default namespace need.
func defaultServiceAccount(c kubernetes.Interface) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}
}
