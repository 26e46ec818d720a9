package sync

import (
	"errors"
	"testing"
)

func TestWebhookUnreachable(t *testing.T) {
	for name, tc := range map[string]struct {
		err  string
		want bool
	}{
		"no endpoints": {err: `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
			`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`, want: true},
		"the webhook said no": {err: `admission webhook "policy.example.com" denied the request: level must be strict`},
		"service unknown": {err: `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
			`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": service "policy-webhook" not found`, want: true},
		"invalid object": {err: `ConfigMap "x" is invalid: metadata.name: Invalid value`},
	} {
		t.Run(name, func(t *testing.T) {
			if got := webhookUnreachable(errors.New(tc.err)); got != tc.want {
				t.Errorf("webhookUnreachable = %v, want %v", got, tc.want)
			}
		})
	}
}
