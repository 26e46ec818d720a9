package sync

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/health"
)

// The readiness gates of a wait: an admission webhook configuration or an
// APIService the step applied is Healthy only once the Services it calls
// have a ready endpoint (health.ExplainWith), so the next step never meets
// a webhook that cannot answer. The wait watches the EndpointSlices of the
// namespaces of those Services and decides again on every change.

var endpointSliceGVK = health.EndpointSliceGroupKind.WithVersion("v1")

// gateOn notes the Services obj's health depends on.
func (w *waiter) gateOn(obj *unstructured.Unstructured) {
	if obj == nil || !health.IsGated(obj.GroupVersionKind().GroupKind()) {
		return
	}
	for _, svc := range health.BackingServices(obj) {
		if !slices.Contains(w.services, svc) {
			w.services = append(w.services, svc)
		}
	}
	if w.slices == nil {
		w.slices = map[string]*unstructured.Unstructured{}
	}
}

// watchSlices starts one list-and-watch of EndpointSlices per namespace of
// a gated Service.
func (w *waiter) watchSlices(ctx context.Context, out chan<- update) error {
	var namespaces []string
	for _, svc := range w.services {
		if !slices.Contains(namespaces, svc.Namespace) {
			namespaces = append(namespaces, svc.Namespace)
		}
	}
	for _, ns := range namespaces {
		ri, err := w.e.cluster.ResourceFor(endpointSliceGVK, ns)
		if err != nil {
			return err
		}
		go listWatch(ctx, ri, watchSpec{gk: health.EndpointSliceGroupKind, namespace: ns, slices: true}, out)
	}
	return nil
}

func (w *waiter) recordSlice(u update) {
	if u.gone {
		delete(w.slices, u.key)
		return
	}
	w.slices[u.key] = u.obj
}

// endpoints returns what the watched EndpointSlices say; nil when no
// target is gated. Before the first list, no Service has a ready endpoint.
func (w *waiter) endpoints() health.Endpoints {
	if w.slices == nil {
		return nil
	}
	list := make([]*unstructured.Unstructured, 0, len(w.slices))
	for _, s := range w.slices {
		list = append(list, s)
	}
	return health.NewEndpointSlices(list)
}
