package application

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Lister lists the Applications of some namespaces.
type Lister struct {
	Reader client.Reader
	// Namespaces to list; empty lists every namespace.
	Namespaces []string
	// Enabled, when set, keeps the apps of the namespaces it accepts.
	Enabled func(namespace string) bool
}

// ListApplications returns the Applications of l.Namespaces.
func (l Lister) ListApplications(ctx context.Context) ([]v1alpha1.Application, error) {
	namespaces := l.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var apps []v1alpha1.Application
	for _, ns := range namespaces {
		var list v1alpha1.ApplicationList
		if err := l.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list applications in namespace %q: %w", ns, err)
		}
		for _, app := range list.Items {
			if l.Enabled == nil || l.Enabled(app.Namespace) {
				apps = append(apps, app)
			}
		}
	}
	return apps, nil
}
