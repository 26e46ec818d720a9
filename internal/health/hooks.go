package health

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotations and finalizers of Argo CD that change how health is assessed.
const (
	// AnnotationIgnoreHealthCheck set to "true" keeps an object out of app health.
	AnnotationIgnoreHealthCheck = "argocd.argoproj.io/ignore-healthcheck"
	// AnnotationIgnoreRestartPolicy makes a running Pod with restart policy
	// Never or OnFailure count as a long-running Pod, unless it is a hook.
	AnnotationIgnoreRestartPolicy = "argocd.argoproj.io/ignore-restart-policy"
	// AnnotationHook marks an Argo CD resource hook.
	AnnotationHook = "argocd.argoproj.io/hook"
	// annotationHelmHook marks a Helm hook, which Argo CD treats as a resource hook.
	annotationHelmHook = "helm.sh/hook"
	// finalizerHook is kept on hooks until Argo CD has read their result.
	finalizerHook = "argocd.argoproj.io/hook-finalizer"
)

// argoHookTypes are the values of argocd.argoproj.io/hook.
var argoHookTypes = []string{"PreSync", "Sync", "PostSync", "SyncFail", "PostDelete", "Skip"}

// helmHookTypes are the Helm hooks Argo CD maps onto its own phases.
var helmHookTypes = []string{"pre-install", "pre-upgrade", "post-upgrade", "post-install"}

// IsHook reports whether obj is a resource hook as Argo CD decides it: an
// argocd.argoproj.io/hook annotation other than Skip alone, or a Helm hook of a
// type Argo CD runs.
func IsHook(obj *unstructured.Unstructured) bool {
	annotations := obj.GetAnnotations()
	if value, ok := annotations[AnnotationHook]; ok {
		types := csvValues(value, argoHookTypes)
		return !(slices.Contains(types, "Skip") && len(types) == 1)
	}
	return len(csvValues(annotations[annotationHelmHook], helmHookTypes)) > 0
}

// hasHookFinalizer reports whether obj still carries Argo CD's hook finalizer.
func hasHookFinalizer(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), finalizerHook)
}

// ignoresHealthCheck reports whether obj asks to be left out of app health.
func ignoresHealthCheck(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[AnnotationIgnoreHealthCheck] == "true"
}

// csvValues splits a comma-separated annotation and keeps the known values.
func csvValues(value string, known []string) []string {
	var out []string
	for part := range strings.SplitSeq(value, ",") {
		part = strings.TrimSpace(part)
		if slices.Contains(known, part) {
			out = append(out, part)
		}
	}
	return out
}
