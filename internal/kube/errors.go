package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectError is an error of one operation on one object.
type ObjectError struct {
	// Op is the operation: "apply", "dry-run", "delete", "get", ...
	Op        string
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Err       error
}

// Error names the operation and the object, then the cause.
func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, RefString(e.GVK, e.Namespace, e.Name), e.Err)
}

// Unwrap returns the cause.
func (e *ObjectError) Unwrap() error { return e.Err }

// RefString formats an object reference as group/Kind namespace/name, the
// namespace left out for cluster-scoped objects.
func RefString(gvk schema.GroupVersionKind, namespace, name string) string {
	kind := gvk.Kind
	if gvk.Group != "" {
		kind = gvk.Group + "/" + gvk.Kind
	}
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

func objectError(op string, ref Ref, err error) error {
	if err == nil {
		return nil
	}
	return &ObjectError{Op: op, GVK: ref.GVK, Namespace: ref.Namespace, Name: ref.Name, Err: err}
}

// webhookCallFailed is how the API server begins its answer when it could
// not call an admission webhook, or the webhook failed.
const webhookCallFailed = "failed calling webhook"

// WebhookCallFailed reports an API server's answer (an error or an
// operation's message) that an admission webhook could not be called, or
// failed.
func WebhookCallFailed(msg string) bool {
	return strings.Contains(msg, webhookCallFailed)
}

// WebhookUnreachable reports the API server's refusal of a request whose
// admission webhook has no endpoint to call, or whose Service it does not
// know yet: nothing was written, and the same request may pass a moment
// later.
func WebhookUnreachable(err error) bool {
	if err == nil || !WebhookCallFailed(err.Error()) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no endpoints available for service") ||
		strings.Contains(msg, `service "`) && strings.Contains(msg, `" not found`)
}
