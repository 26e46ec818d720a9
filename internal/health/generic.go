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
// documentation does: Progressing until the child reports one. wavecd goes
// further, so a parent's wave never advances on a stale or early Healthy:
// a child is Progressing while the controller has not yet compared its
// current source and destination (status.sync.comparedTo), while a sync
// operation is requested or running, while its own resources are still
// Missing, and while an automatically synced child is OutOfSync.
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
	if wait := applicationPending(f); wait != "" {
		return status(Progressing, wait), nil
	}
	return status(code, message), nil
}

// applicationPending says why a child app's reported health is not final
// yet, or "" when it is.
func applicationPending(f *fields) string {
	if !comparedCurrentSpec(f) {
		return "waiting for the controller to compare the current spec"
	}
	if f.str("status", "health", "status") == string(Missing) {
		// Argo CD leaves a Missing child out of its parent's health, so a
		// parent reads Healthy right after creating a child; wavecd counts
		// it as on its way.
		return "waiting for the application's resources to be created"
	}
	if f.get("operation") != nil {
		return "sync requested"
	}
	if phase := f.str("status", "operationState", "phase"); phase == "Running" || phase == "Terminating" {
		if msg := f.str("status", "operationState", "message"); msg != "" {
			return "sync running: " + msg
		}
		return "sync running"
	}
	automated := f.get("spec", "syncPolicy", "automated") != nil && f.get("spec", "syncPolicy", "automated", "enabled") != false
	if sync := f.str("status", "sync", "status"); automated && (sync == "OutOfSync" || sync == "Unknown") {
		return "waiting for automated sync (" + sync + ")"
	}
	return ""
}

// comparedCurrentSpec reports whether status.sync.comparedTo names the
// source(s) and destination the spec holds now.
func comparedCurrentSpec(f *fields) bool {
	for _, k := range []string{"repoURL", "path", "targetRevision", "chart"} {
		if f.str("spec", "source", k) != f.str("status", "sync", "comparedTo", "source", k) {
			return false
		}
	}
	for _, k := range []string{"server", "namespace", "name"} {
		if f.str("spec", "destination", k) != f.str("status", "sync", "comparedTo", "destination", k) {
			return false
		}
	}
	return len(f.list("spec", "sources")) == len(f.list("status", "sync", "comparedTo", "sources"))
}

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
