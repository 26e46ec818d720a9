package health

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadinessGates(t *testing.T) {
	const noEndpoint = `webhook "webhook.cert-manager.io" calls Service cert-manager/cert-manager-webhook, which has no ready endpoint`
	tests := map[string]struct {
		object string
		slices []string
		parity bool
		want   Result
	}{
		"webhook: ready endpoint":              {"validating-webhook", []string{"slice-cert-manager-ready"}, false, Result{Status{Healthy, ""}, SourceGate}},
		"webhook: ready condition unset":       {"validating-webhook", []string{"slice-cert-manager-unset"}, false, Result{Status{Healthy, ""}, SourceGate}},
		"webhook: no EndpointSlice":            {"validating-webhook", nil, false, Result{Status{Progressing, noEndpoint}, SourceGate}},
		"webhook: endpoint not ready":          {"validating-webhook", []string{"slice-cert-manager-not-ready"}, false, Result{Status{Progressing, noEndpoint}, SourceGate}},
		"webhook: slice without endpoints":     {"validating-webhook", []string{"slice-cert-manager-empty"}, false, Result{Status{Progressing, noEndpoint}, SourceGate}},
		"webhook: one ready slice of two":      {"validating-webhook", []string{"slice-cert-manager-empty", "slice-cert-manager-ready"}, false, Result{Status{Healthy, ""}, SourceGate}},
		"webhook: same name, other namespace":  {"validating-webhook", []string{"slice-cert-manager-other-namespace"}, false, Result{Status{Progressing, noEndpoint}, SourceGate}},
		"webhook: called by URL":               {"webhook-url", nil, false, Result{Status{Healthy, ""}, SourceGate}},
		"mutating: second Service not ready":   {"mutating-webhook-two", []string{"slice-alb-ready"}, false, Result{Status{Progressing, `webhook "mservice.elbv2.k8s.aws" calls Service kube-system/aws-load-balancer-extra, which has no ready endpoint`}, SourceGate}},
		"webhook: Argo CD parity has no check": {"validating-webhook", nil, true, Result{}},

		"apiservice: available, ready endpoint":    {"apiservice-available", []string{"slice-metrics-server-ready"}, false, Result{Status{Healthy, "Passed: all checks passed"}, SourceBuiltin}},
		"apiservice: available, no ready endpoint": {"apiservice-available", nil, false, Result{Status{Progressing, "Service kube-system/metrics-server has no ready endpoint"}, SourceGate}},
		"apiservice: not available, ready endpoint": {"apiservice-missing-endpoints", []string{"slice-metrics-server-ready"}, false,
			Result{Status{Progressing, `MissingEndpoints: endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"`}, SourceBuiltin}},
		"apiservice: local":                          {"apiservice-local", nil, false, Result{Status{Healthy, "Local: Local APIServices are always available"}, SourceBuiltin}},
		"apiservice: Argo CD parity reads Available": {"apiservice-available", nil, true, Result{Status{Healthy, "Passed: all checks passed"}, SourceBuiltin}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := newTestAssessor(t, Options{ArgoParity: tc.parity})
			obj := readFixture(t, filepath.Join("gates", tc.object+".yaml"))
			var slices []*unstructured.Unstructured
			for _, s := range tc.slices {
				slices = append(slices, readFixture(t, filepath.Join("gates", s+".yaml")))
			}
			got := a.ExplainWith(obj, NewEndpointSlices(slices))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("health mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadinessGateWithoutEndpoints(t *testing.T) {
	a := newTestAssessor(t, Options{})
	obj := readFixture(t, filepath.Join("gates", "validating-webhook.yaml"))
	if got, want := a.Explain(obj), (Result{Status{Healthy, ""}, SourceGate}); got != want {
		t.Errorf("Explain without endpoints = %v, want %v", got, want)
	}
	if !a.HasCheck(validatingWebhookGK) {
		t.Error("a webhook configuration has no check with gates on: a missing one would not count")
	}
}

func TestBackingServices(t *testing.T) {
	tests := map[string]struct {
		object string
		want   []ServiceRef
	}{
		"validating webhook":      {"validating-webhook", []ServiceRef{{"cert-manager", "cert-manager-webhook"}}},
		"two webhooks":            {"mutating-webhook-two", []ServiceRef{{"kube-system", "aws-load-balancer-webhook-service"}, {"kube-system", "aws-load-balancer-extra"}}},
		"webhook called by URL":   {"webhook-url", nil},
		"APIService":              {"apiservice-available", []ServiceRef{{"kube-system", "metrics-server"}}},
		"local APIService":        {"apiservice-local", nil},
		"EndpointSlice, no calls": {"slice-alb-ready", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := BackingServices(readFixture(t, filepath.Join("gates", tc.object+".yaml")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("services mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateWithGates(t *testing.T) {
	a := newTestAssessor(t, Options{})
	hook := readFixture(t, filepath.Join("gates", "validating-webhook.yaml"))
	res := []Resource{{GroupKind: validatingWebhookGK, Live: hook}}
	if got := a.Aggregate(res, NewEndpointSlices(nil)).Status; got != Progressing {
		t.Errorf("app with a webhook without endpoints = %s, want Progressing", got)
	}
	ready := NewEndpointSlices([]*unstructured.Unstructured{readFixture(t, filepath.Join("gates", "slice-cert-manager-ready.yaml"))})
	if got := a.Aggregate(res, ready).Status; got != Healthy {
		t.Errorf("app with a ready webhook = %s, want Healthy", got)
	}
}
