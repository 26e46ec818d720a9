package sync

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/kube"
)

// webhookRetryFor and webhookRetryEvery say how long, and how often, an
// apply is tried again that the API server refused because an admission
// webhook's Service has no endpoint (or is not known to it yet). A wave
// gated on the webhook starts once the EndpointSlices say the Service has
// a ready endpoint, and the API server learns of that endpoint through a
// cache of its own, a moment later; a webhook installed in the same sync
// is as fresh. Nothing was written by the refused apply, so it is safe to
// repeat.
const (
	webhookRetryFor   = 3 * time.Second
	webhookRetryEvery = 200 * time.Millisecond
)

// applyAdmitted applies obj, trying again for webhookRetryFor while the
// API server finds no endpoint for a webhook it must call.
func (e *Executor) applyAdmitted(ctx context.Context, obj *unstructured.Unstructured, opts kube.ApplyOptions) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(webhookRetryFor)
	for {
		out, err := e.cluster.Apply(ctx, obj, opts)
		if err == nil || !webhookUnreachable(err) || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(webhookRetryEvery):
		}
	}
}

// webhookUnreachable reports the API server's refusal of a request whose
// admission webhook has no endpoint to call, or whose Service it does not
// know yet.
func webhookUnreachable(err error) bool {
	msg := err.Error()
	if !strings.Contains(msg, "failed calling webhook") {
		return false
	}
	return strings.Contains(msg, "no endpoints available for service") ||
		strings.Contains(msg, `service "`) && strings.Contains(msg, `" not found`)
}
