package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/project"
)

// orphanedWarning counts, when the app's project asks for it
// (orphanedResources), the objects in the app's destination namespace that
// no app manages: no tracking of this installation, no owner, not ignored
// by the project, not one the cluster creates in every namespace and not
// an argoproj.io object. It
// returns the OrphanedResourceWarning message, "" when there is none.
func orphanedWarning(ctx context.Context, cluster *kube.Cluster, app *v1alpha1.Application, proj *v1alpha1.AppProject, installationID string) (string, error) {
	if proj == nil || proj.Spec.OrphanedResources == nil || app.Spec.Destination.Namespace == "" {
		return "", nil
	}
	objs, err := cluster.ListNamespace(ctx, app.Spec.Destination.Namespace)
	if err != nil {
		return "", fmt.Errorf("list namespace %s: %w", app.Spec.Destination.Namespace, err)
	}
	var orphans []string
	for _, o := range objs {
		if isOrphan(o, proj.Spec.OrphanedResources.Ignore, installationID) {
			orphans = append(orphans, kube.RefOf(o).String())
		}
	}
	if len(orphans) == 0 {
		return "", nil
	}
	logctx.From(ctx).Debug("orphaned resources", "objects", orphans)
	return fmt.Sprintf("Application has %d orphaned resources", len(orphans)), nil
}

// perNamespace are objects Kubernetes creates in every namespace.
var perNamespace = map[string]bool{"/ServiceAccount/default": true, "/ConfigMap/kube-root-ca.crt": true}

func isOrphan(o *unstructured.Unstructured, ignore []v1alpha1.OrphanedResourceKey, installationID string) bool {
	gvk := o.GroupVersionKind()
	if len(o.GetOwnerReferences()) > 0 || perNamespace[gvk.Group+"/"+gvk.Kind+"/"+o.GetName()] || gvk.Group == v1alpha1.Group {
		return false // owned, made by Kubernetes, or Applications and projects themselves
	}
	if (kube.Tracking{InstallationID: installationID, Method: kube.TrackingAnnotation}).Owner(o) != "" ||
		o.GetAnnotations()[kube.AnnotationInstallationID] == installationID && o.GetLabels()[kube.LabelInstance] != "" {
		return false
	}
	return !project.OrphanIgnored(ignore, gvk.GroupKind(), o.GetName())
}
