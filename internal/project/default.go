package project

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// DefaultName is the project of an app that names none.
const DefaultName = "default"

// Default is Argo CD's permissive `default` project in namespace: every
// repository, every destination, every cluster-scoped kind.
func Default(namespace string) *v1alpha1.AppProject {
	return &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: DefaultName},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestriction{{Group: "*", Kind: "*"}},
		},
	}
}

// EnsureDefault creates the default project in namespace when it is
// missing, as Argo CD's API server does when it starts.
func EnsureDefault(ctx context.Context, c client.Client, namespace string) error {
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: DefaultName}, &v1alpha1.AppProject{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.Create(ctx, Default(namespace)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the default AppProject: %w", err)
	}
	return nil
}
