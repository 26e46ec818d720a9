package health

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Check assesses the health of one object. It returns nil when it has nothing
// to say about the object, and an error when the object cannot be assessed;
// the Assessor reports such an error as Unknown with the error as message.
type Check func(obj *unstructured.Unstructured) (*Status, error)

// builtinChecks holds the built-in Go checks, keyed by group and kind, with
// the same coverage as Argo CD's gitops-engine.
var builtinChecks = map[schema.GroupKind]Check{
	{Group: "apps", Kind: "Deployment"}:                     typed("Deployment", deploymentHealth, "v1"),
	{Group: "apps", Kind: "StatefulSet"}:                    typed("StatefulSet", statefulSetHealth, "v1"),
	{Group: "apps", Kind: "DaemonSet"}:                      typed("DaemonSet", daemonSetHealth, "v1"),
	{Group: "apps", Kind: "ReplicaSet"}:                     typed("ReplicaSet", replicaSetHealth, "v1"),
	{Group: "", Kind: "Pod"}:                                typed("Pod", podHealth, "v1"),
	{Group: "", Kind: "Service"}:                            typed("Service", serviceHealth, "v1"),
	{Group: "", Kind: "PersistentVolumeClaim"}:              typed("PersistentVolumeClaim", pvcHealth, "v1"),
	{Group: "batch", Kind: "Job"}:                           typed("Job", jobHealth, "v1"),
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: typed("HPA", hpaHealth, "v1", "v2", "v2beta1", "v2beta2"),
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:   typed("APIService", apiServiceHealth, "v1", "v1beta1"),
	{Group: "networking.k8s.io", Kind: "Ingress"}:           typed("Ingress", ingressHealth),
	{Group: "extensions", Kind: "Ingress"}:                  typed("Ingress", ingressHealth),
	{Group: "argoproj.io", Kind: "Workflow"}:                typed("Workflow", workflowHealth),
}

// BuiltinCheck returns the built-in Go check for gk, or nil when there is none.
func BuiltinCheck(gk schema.GroupKind) Check {
	return builtinChecks[gk]
}

// typed wraps a check body that reads the object through fields. It rejects
// API versions the check does not know (when versions are given) and turns a
// field of the wrong type into an error, as Argo CD's typed conversion does.
func typed(kind string, body func(obj *unstructured.Unstructured, f *fields) *Status, versions ...string) Check {
	return func(obj *unstructured.Unstructured) (*Status, error) {
		gvk := obj.GroupVersionKind()
		if len(versions) > 0 && !slices.Contains(versions, gvk.Version) {
			return nil, fmt.Errorf("unsupported %s GVK: %s", kind, gvk)
		}
		f := newFields(obj.Object)
		st := body(obj, f)
		if f.err != nil {
			return nil, fmt.Errorf("failed to convert unstructured %s to typed: %w", kind, f.err)
		}
		return st, nil
	}
}

func status(code Code, message string) *Status {
	return &Status{Status: code, Message: message}
}

func statusf(code Code, format string, args ...any) *Status {
	return &Status{Status: code, Message: fmt.Sprintf(format, args...)}
}
