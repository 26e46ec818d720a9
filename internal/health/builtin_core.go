package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceHealth: a LoadBalancer Service is Progressing until the cloud gives
// it an ingress point; any other Service is Healthy.
func serviceHealth(_ *unstructured.Unstructured, f *fields) *Status {
	if f.str("spec", "type") == "LoadBalancer" && len(f.list("status", "loadBalancer", "ingress")) == 0 {
		return status(Progressing, "")
	}
	return status(Healthy, "")
}

// ingressHealth: an Ingress is Healthy once its controller publishes an address.
func ingressHealth(_ *unstructured.Unstructured, f *fields) *Status {
	if len(f.list("status", "loadBalancer", "ingress")) == 0 {
		return status(Progressing, "")
	}
	return status(Healthy, "")
}

// pvcHealth maps a claim's phase: Bound is Healthy, Pending is Progressing
// (waiting for a volume or its first consumer), Lost is Degraded.
func pvcHealth(_ *unstructured.Unstructured, f *fields) *Status {
	switch f.str("status", "phase") {
	case "Bound":
		return status(Healthy, "")
	case "Pending":
		return status(Progressing, "")
	case "Lost":
		return status(Degraded, "")
	}
	return status(Unknown, "")
}

// apiServiceHealth reads the Available condition of an aggregated API.
func apiServiceHealth(_ *unstructured.Unstructured, f *fields) *Status {
	cond := findCondition(f.conditions("status", "conditions"), "Available")
	switch {
	case cond == nil:
		return status(Progressing, "Waiting to be processed")
	case cond.Status == "True":
		return statusf(Healthy, "%s: %s", cond.Reason, cond.Message)
	}
	return statusf(Progressing, "%s: %s", cond.Reason, cond.Message)
}
