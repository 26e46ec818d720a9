package application

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// RefreshAnnotation asks the controller to refresh an app at once; the
// controller removes it when the refresh is done.
const RefreshAnnotation = "argocd.argoproj.io/refresh"

// RefreshType is the value of RefreshAnnotation.
type RefreshType string

// Refresh types, as in Argo CD.
const (
	// RefreshNormal re-reads Git and compares with the cluster.
	RefreshNormal RefreshType = "normal"
	// RefreshHard also drops cached manifests.
	RefreshHard RefreshType = "hard"
)

// AnnotationRefresher requests refreshes by setting RefreshAnnotation on the
// Application, so a refresh works whether or not the controller runs in the
// same process.
type AnnotationRefresher struct {
	Client client.Client
}

// Refresh sets RefreshAnnotation on namespace/name to t and, for an app
// with a source hydrator, v1alpha1.AnnotationHydrate too, as Argo CD
// does: a refresh also hydrates.
func (r AnnotationRefresher) Refresh(ctx context.Context, namespace, name string, t RefreshType) error {
	app := &v1alpha1.Application{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app)
	if apierrors.IsNotFound(err) {
		return &NotFoundError{Name: name, Namespace: namespace}
	}
	if err != nil {
		return fmt.Errorf("refresh application %s/%s: %w", namespace, name, err)
	}
	annotations := map[string]string{RefreshAnnotation: string(t)}
	if app.Spec.SourceHydrator != nil {
		annotations[v1alpha1.AnnotationHydrate] = string(t)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("encode refresh patch: %w", err)
	}
	err = r.Client.Patch(ctx, app, client.RawPatch(client.Merge.Type(), patch))
	if apierrors.IsNotFound(err) {
		return &NotFoundError{Name: name, Namespace: namespace}
	}
	if err != nil {
		return fmt.Errorf("refresh application %s/%s: %w", namespace, name, err)
	}
	return nil
}
