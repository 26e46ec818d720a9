package kube

import (
	"errors"
	"testing"
)

func TestWebhookUnreachable(t *testing.T) {
	for name, tc := range map[string]struct {
		err        string
		want, call bool
	}{
		"no endpoints": {err: `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
			`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`, want: true, call: true},
		"the webhook said no": {err: `admission webhook "policy.example.com" denied the request: level must be strict`},
		"service unknown": {err: `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
			`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": service "policy-webhook" not found`, want: true, call: true},
		"the webhook timed out": {err: `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
			`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": context deadline exceeded`, call: true},
		"invalid object": {err: `ConfigMap "x" is invalid: metadata.name: Invalid value`},
	} {
		t.Run(name, func(t *testing.T) {
			if got := WebhookUnreachable(errors.New(tc.err)); got != tc.want {
				t.Errorf("WebhookUnreachable = %v, want %v", got, tc.want)
			}
			if got := WebhookCallFailed(tc.err); got != tc.call {
				t.Errorf("WebhookCallFailed = %v, want %v", got, tc.call)
			}
		})
	}
	if WebhookUnreachable(nil) {
		t.Error("WebhookUnreachable(nil) = true")
	}
}
