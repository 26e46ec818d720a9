package compare

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
)

// gatedServices lists the Services the app's live admission webhook
// configurations and APIServices call: their readiness is part of the
// app's health (health.ExplainWith). Nil in Argo CD parity.
func gatedServices(s *Settings, live []*unstructured.Unstructured) []health.ServiceRef {
	if !s.Assessor.Gates() {
		return nil
	}
	var out []health.ServiceRef
	for _, l := range live {
		if !health.IsGated(l.GroupVersionKind().GroupKind()) || hook.IsHook(l) {
			continue
		}
		for _, svc := range health.BackingServices(l) {
			if !slices.Contains(out, svc) {
				out = append(out, svc)
			}
		}
	}
	return out
}

// readEndpoints reads the EndpointSlices of services at tgt; nil when
// there are none to read.
func readEndpoints(ctx context.Context, tgt *destination.Target, services []health.ServiceRef) (health.Endpoints, error) {
	if len(services) == 0 {
		return nil, nil
	}
	gvk := health.EndpointSliceGroupKind.WithVersion("v1")
	var list []*unstructured.Unstructured
	for _, svc := range services {
		ri, err := tgt.Kube.ResourceFor(gvk, svc.Namespace)
		if err != nil {
			return nil, fmt.Errorf("read endpoints of Service %s: %w", svc, err)
		}
		got, err := ri.List(ctx, metav1.ListOptions{LabelSelector: health.ServiceSelector(svc)})
		if err != nil {
			return nil, fmt.Errorf("read endpoints of Service %s: %w", svc, err)
		}
		for i := range got.Items {
			list = append(list, &got.Items[i])
		}
	}
	return health.NewEndpointSlices(list), nil
}
