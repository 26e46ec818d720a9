package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/hook"
)

// Annotations and finalizers of Argo CD that change how health is assessed.
const (
	// AnnotationIgnoreHealthCheck set to "true" keeps an object out of app health.
	AnnotationIgnoreHealthCheck = "argocd.argoproj.io/ignore-healthcheck"
	// AnnotationIgnoreRestartPolicy makes a running Pod with restart policy
	// Never or OnFailure count as a long-running Pod, unless it is a hook.
	AnnotationIgnoreRestartPolicy = "argocd.argoproj.io/ignore-restart-policy"
	// finalizerHook is kept on hooks until Argo CD has read their result.
	finalizerHook = hook.Finalizer
)

// hasHookFinalizer reports whether obj still carries Argo CD's hook finalizer.
func hasHookFinalizer(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), finalizerHook)
}

// ignoresHealthCheck reports whether obj asks to be left out of app health.
func ignoresHealthCheck(obj *unstructured.Unstructured) bool {
	v, _ := hook.Annotation(obj, AnnotationIgnoreHealthCheck)
	return v == "true"
}
