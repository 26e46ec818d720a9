package controller

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/internal/logctx"
)

// clusterEvents follows the cluster Secrets: targets of clusters that
// went away or changed are dropped, and the apps whose destination names
// the Secret's server or name are reconciled (an unknown destination
// becomes valid, a removed one invalid).
func (rt *router) clusterEvents(ctx context.Context, obj client.Object) []reconcile.Request {
	if rt.shards != nil {
		rt.shards.Changed() // a cluster's shard pins its apps
	}
	if err := rt.targets.Prune(ctx); err != nil {
		logctx.From(ctx).Warn("read cluster secrets", "err", err)
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	server := strings.TrimRight(strings.TrimSpace(string(s.Data["server"])), "/")
	name := strings.TrimSpace(string(s.Data["name"]))
	apps := rt.apps(ctx)
	var reqs []reconcile.Request
	for i := range apps {
		d := apps[i].Spec.Destination
		if (d.Server != "" && strings.TrimRight(d.Server, "/") == server) || (d.Name != "" && d.Name == name) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps[i])})
		}
	}
	return reqs
}
