package sync

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/wavecd/wavecd/internal/kube"
)

// admissionRetry says how long, and how often, a write (or its dry run) is
// tried again that the API server refused because an admission webhook's
// Service has no endpoint (or is not known to it yet). A wave gated on the
// webhook starts once the EndpointSlices say the Service has a ready
// endpoint, and the API server learns of that endpoint through a cache of
// its own, a moment later; a webhook installed in an earlier step is as
// fresh. Nothing was written by the refused request, so it is safe to
// repeat.
type admissionRetry struct {
	For, Every time.Duration
}

// webhookRetry is the retry of a sync's writes and dry runs.
var webhookRetry = admissionRetry{For: 3 * time.Second, Every: 200 * time.Millisecond}

// applyAdmitted applies obj (or dry-runs it, as opts say), trying again
// while the API server finds no endpoint for a webhook it must call. In
// Argo CD parity the first answer stands, as Argo CD's sync takes it.
func (e *Executor) applyAdmitted(ctx context.Context, obj *unstructured.Unstructured, opts kube.ApplyOptions) (*unstructured.Unstructured, error) {
	retry := webhookRetry
	if e.opts.ArgoParity {
		retry = admissionRetry{}
	}
	return admitted(ctx, retry, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return e.cluster.Apply(ctx, obj, opts)
	})
}

// admitted calls write until it succeeds, fails for another reason than
// an unreachable webhook (kube.WebhookUnreachable), or r.For has passed;
// it returns the last answer. A zero r calls write once.
func admitted(ctx context.Context, r admissionRetry, write func(context.Context) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	out, err := write(ctx)
	if err == nil || r.For <= 0 || !kube.WebhookUnreachable(err) {
		return out, err
	}
	// The poll ends when the answer stands, the time is up or ctx ends;
	// either way the last answer is the result. A write runs under ctx,
	// not the poll's deadline, which would cut one short mid-request.
	_ = wait.PollUntilContextTimeout(ctx, r.Every, r.For, false, func(context.Context) (bool, error) {
		out, err = write(ctx)
		return err == nil || !kube.WebhookUnreachable(err), nil
	})
	return out, err
}
