package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/project"
)

// InClusterServer is the destination URL of the cluster the controller runs in.
const InClusterServer = cluster.InClusterServer

// getProject reads the app's AppProject, creating the permissive `default`
// project when it is the one named and missing (as Argo CD does). The
// project is the cache's own copy: callers read it, never change it.
func getProject(ctx context.Context, c client.Client, namespace, name string) (*v1alpha1.AppProject, error) {
	if name == "" {
		name = "default"
	}
	// The cache's own copy, read by every reconcile and sync of the
	// project's apps: it is only read.
	proj := &v1alpha1.AppProject{}
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, proj, client.UnsafeDisableDeepCopy)
	if err == nil || !apierrors.IsNotFound(err) || name != "default" {
		if err != nil {
			return nil, fmt.Errorf("read AppProject %s: %w", name, err)
		}
		return proj, nil
	}
	proj = project.Default(namespace)
	if err := c.Create(ctx, proj); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create default AppProject: %w", err)
	}
	return proj, nil
}
