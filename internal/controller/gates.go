package controller

import (
	"context"
	stdsync "sync"

	"github.com/wavecd/wavecd/internal/logctx"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/health"
)

// gateIndex knows which apps' health waits on which Services: those their
// admission webhook configurations and APIServices call. A change to one
// of those Services' EndpointSlices refreshes the apps at once, so a
// parent waiting on a child Application sees it turn Healthy on the event.
type gateIndex struct {
	mu   stdsync.Mutex
	apps map[health.ServiceRef]map[string]bool
	// of holds each app's Services, to drop them when they change.
	of map[string][]health.ServiceRef
}

// set records the Services app's health waits on.
func (g *gateIndex) set(app string, services []health.ServiceRef) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.apps == nil {
		g.apps, g.of = map[health.ServiceRef]map[string]bool{}, map[string][]health.ServiceRef{}
	}
	for _, svc := range g.of[app] {
		delete(g.apps[svc], app)
		if len(g.apps[svc]) == 0 {
			delete(g.apps, svc)
		}
	}
	delete(g.of, app)
	for _, svc := range services {
		if g.apps[svc] == nil {
			g.apps[svc] = map[string]bool{}
		}
		g.apps[svc][app] = true
	}
	if len(services) > 0 {
		g.of[app] = services
	}
}

// appsOf returns the apps waiting on svc.
func (g *gateIndex) appsOf(svc health.ServiceRef) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.apps[svc]))
	for app := range g.apps[svc] {
		out = append(out, app)
	}
	return out
}

// watchGates records the Services app's health waits on and makes the
// target's live cache watch EndpointSlices when there are some.
func (rt *router) watchGates(ctx context.Context, tgt *destination.Target, app string, services []health.ServiceRef) {
	rt.gates.set(app, services)
	if len(services) == 0 || tgt.Live == nil {
		return
	}
	if err := tgt.Live.EnsureWatched([]schema.GroupKind{health.EndpointSliceGroupKind}); err != nil {
		logctx.From(ctx).Warn("watch EndpointSlices for readiness gates", "server", tgt.Server, "err", err)
	}
}

// gateEvents refreshes the apps waiting on the Service an EndpointSlice
// belongs to.
func (rt *router) gateEvents(_ context.Context, obj client.Object) []reconcile.Request {
	svc := health.ServiceRef{Namespace: obj.GetNamespace(), Name: obj.GetLabels()[health.LabelServiceName]}
	if svc.Name == "" {
		return nil
	}
	var out []reconcile.Request
	for _, app := range rt.gates.appsOf(svc) {
		rt.refreshes.mark(app, normalRefresh)
		out = append(out, rt.request(app))
	}
	return out
}
