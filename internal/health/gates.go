package health

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SourceGate names the readiness gate of an admission webhook
// configuration, whose kind has no check of its own.
const SourceGate = "readiness gate"

// The kinds whose health depends on a Service they call.
var (
	validatingWebhookGK = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}
	mutatingWebhookGK   = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}
	apiServiceGK        = schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}
)

// EndpointSliceGroupKind is the kind Endpoints implementations read.
var EndpointSliceGroupKind = schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}

// LabelServiceName is the label an EndpointSlice names its Service by.
const LabelServiceName = "kubernetes.io/service-name"

// ServiceRef names a Service.
type ServiceRef struct {
	Namespace string
	Name      string
}

func (s ServiceRef) String() string { return s.Namespace + "/" + s.Name }

// Endpoints tells whether a Service has a ready endpoint. The health of an
// admission webhook configuration and of an APIService depends on it; this
// package does not read the cluster, so the callers that do implement it
// (NewEndpointSlices builds one from the EndpointSlices they read).
type Endpoints interface {
	// Ready reports whether the Service has at least one ready endpoint.
	Ready(svc ServiceRef) bool
}

// gated is a Service an object calls, and who calls it.
type gated struct {
	svc ServiceRef
	// caller is the webhook's name, empty for an APIService.
	caller string
}

// IsGated reports whether objects of gk are held Progressing while a
// Service they call has no ready endpoint (when the Assessor gates).
func IsGated(gk schema.GroupKind) bool {
	return gk == validatingWebhookGK || gk == mutatingWebhookGK || gk == apiServiceGK
}

// BackingServices lists the Services obj calls: those of an admission
// webhook configuration's webhooks (not those called by URL) or an
// APIService's service, in order and without repeats; nil for other kinds.
func BackingServices(obj *unstructured.Unstructured) []ServiceRef {
	var out []ServiceRef
	for _, g := range callees(obj) {
		if !slices.Contains(out, g.svc) {
			out = append(out, g.svc)
		}
	}
	return out
}

func callees(obj *unstructured.Unstructured) []gated {
	switch obj.GroupVersionKind().GroupKind() {
	case validatingWebhookGK, mutatingWebhookGK:
		webhooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		var out []gated
		for _, w := range webhooks {
			m, ok := w.(map[string]any)
			if !ok {
				continue
			}
			name, _, _ := unstructured.NestedString(m, "name")
			if svc, ok := serviceAt(m, "clientConfig", "service"); ok {
				out = append(out, gated{svc: svc, caller: name})
			}
		}
		return out
	case apiServiceGK:
		if svc, ok := serviceAt(obj.Object, "spec", "service"); ok {
			return []gated{{svc: svc}}
		}
	}
	return nil
}

func serviceAt(m map[string]any, path ...string) (ServiceRef, bool) {
	svc, ok, _ := unstructured.NestedMap(m, path...)
	if !ok {
		return ServiceRef{}, false
	}
	ns, _, _ := unstructured.NestedString(svc, "namespace")
	name, _, _ := unstructured.NestedString(svc, "name")
	return ServiceRef{Namespace: ns, Name: name}, name != ""
}

// gate holds a Healthy webhook configuration or APIService Progressing
// while a Service it calls has no ready endpoint.
func gate(obj *unstructured.Unstructured, eps Endpoints) *Status {
	for _, g := range callees(obj) {
		if eps.Ready(g.svc) {
			continue
		}
		if g.caller != "" {
			return statusf(Progressing, "webhook %q calls Service %s, which has no ready endpoint", g.caller, g.svc)
		}
		return statusf(Progressing, "Service %s has no ready endpoint", g.svc)
	}
	return nil
}

// webhookConfigHealth is the check of an admission webhook configuration
// when gates are on: Healthy, the gate deciding the rest.
func webhookConfigHealth(*unstructured.Unstructured) (*Status, error) {
	return status(Healthy, ""), nil
}

// EndpointSlices implements Endpoints over EndpointSlice objects
// (discovery.k8s.io/v1). An endpoint is ready when it has an address and
// its ready condition is not false (unset means ready, as the API says).
type EndpointSlices struct {
	ready map[ServiceRef]bool
}

// NewEndpointSlices indexes slices by the Service they belong to.
func NewEndpointSlices(slices []*unstructured.Unstructured) *EndpointSlices {
	e := &EndpointSlices{ready: map[ServiceRef]bool{}}
	for _, s := range slices {
		name := s.GetLabels()[LabelServiceName]
		if name == "" {
			continue
		}
		svc := ServiceRef{Namespace: s.GetNamespace(), Name: name}
		e.ready[svc] = e.ready[svc] || hasReadyEndpoint(s)
	}
	return e
}

// Ready reports whether svc has a ready endpoint in the slices.
func (e *EndpointSlices) Ready(svc ServiceRef) bool { return e.ready[svc] }

func hasReadyEndpoint(slice *unstructured.Unstructured) bool {
	endpoints, _, _ := unstructured.NestedSlice(slice.Object, "endpoints")
	for _, ep := range endpoints {
		m, ok := ep.(map[string]any)
		if !ok {
			continue
		}
		addrs, _, _ := unstructured.NestedStringSlice(m, "addresses")
		ready, set, _ := unstructured.NestedBool(m, "conditions", "ready")
		if len(addrs) > 0 && (ready || !set) {
			return true
		}
	}
	return false
}

// ServiceSelector is the label selector of a Service's EndpointSlices.
func ServiceSelector(svc ServiceRef) string {
	return fmt.Sprintf("%s=%s", LabelServiceName, svc.Name)
}
