package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// applicationGroupKind is Argo CD's Application.
var applicationGroupKind = schema.GroupKind{Group: "argoproj.io", Kind: "Application"}

// applicationHealth reports a child Application's own health from
// status.health, as the argoproj.io_Application customization from Argo CD's
// documentation does: Progressing until the child reports one.
func applicationHealth(obj *unstructured.Unstructured) (*Status, error) {
	f := newFields(obj.Object)
	code := Code(f.str("status", "health", "status"))
	message := f.str("status", "health", "message")
	if f.err != nil {
		return nil, f.err
	}
	switch {
	case code == "":
		return status(Progressing, ""), nil
	case !code.Valid():
		return statusf(Unknown, "application reports an unknown health status %q", code), nil
	}
	return status(code, message), nil
}

// kubernetesGroups are API groups served by Kubernetes itself; objects of
// other groups are custom resources.
var kubernetesGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"apiextensions.k8s.io": true, "apiregistration.k8s.io": true, "admissionregistration.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "node.k8s.io": true, "scheduling.k8s.io": true,
	"certificates.k8s.io": true, "authentication.k8s.io": true, "authorization.k8s.io": true,
	"resource.k8s.io": true, "internal.apiserver.k8s.io": true, "storagemigration.k8s.io": true,
}

func isCustomResource(gk schema.GroupKind) bool { return !kubernetesGroups[gk.Group] }

// failureWords mark a condition reason that reports a failure, not a wait.
var failureWords = []string{"fail", "error", "invalid", "degraded", "backoff", "exceeded", "unhealthy"}

// genericHealth is wavecd's check for custom resources without one of their
// own, from the conventions most controllers follow: a spec change not yet
// observed is Progressing; a Stalled condition is Degraded; the Ready (else
// Available) condition decides: True is Healthy, False with a failure reason
// is Degraded, anything else is Progressing. Without such conditions the
// object has no health.
func genericHealth(obj *unstructured.Unstructured) (*Status, error) {
	f := newFields(obj.Object)
	generation := obj.GetGeneration()
	observed, hasObserved := f.integer("status", "observedGeneration")
	conds := f.conditions("status", "conditions")
	if f.err != nil {
		return nil, f.err
	}
	if hasObserved && observed < generation {
		return statusf(Progressing, "Waiting for the controller to observe generation %d (observed %d)", generation, observed), nil
	}
	if c := findCondition(conds, "Stalled"); c != nil && c.Status == "True" {
		return status(Degraded, conditionMessage(c)), nil
	}
	c := findCondition(conds, "Ready")
	if c == nil {
		c = findCondition(conds, "Available")
	}
	switch {
	case c == nil:
		return nil, nil
	case c.HasObservedGeneration && c.ObservedGeneration < generation:
		return statusf(Progressing, "Waiting for the controller to observe generation %d (%s condition is for %d)", generation, c.Type, c.ObservedGeneration), nil
	case c.Status == "True":
		return status(Healthy, c.Message), nil
	case c.Status == "False" && isFailureReason(c.Reason):
		return status(Degraded, conditionMessage(c)), nil
	}
	return status(Progressing, conditionMessage(c)), nil
}

func isFailureReason(reason string) bool {
	lower := strings.ToLower(reason)
	for _, w := range failureWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// conditionMessage is the condition's message, or its reason when it has none.
func conditionMessage(c *condition) string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}
