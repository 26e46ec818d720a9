package cluster

import (
	"context"

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

// defaultServiceAccount holds once the controller-manager has created the
// default ServiceAccount, which pods in the default namespace need.
func defaultServiceAccount(c kubernetes.Interface) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}
}
