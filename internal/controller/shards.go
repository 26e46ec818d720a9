package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/shard"
)

// defaultLeaseDuration is a replica's Lease duration when Options leave it
// at 0, as the manager's leader election defaults it.
const defaultLeaseDuration = 15 * time.Second

// setupShards makes r reconcile only the apps the shard Coordinator gives
// this replica, and runs the Coordinator with mgr.
func (r *Reconciler) setupShards(mgr manager.Manager) error {
	duration := r.opts.LeaseDuration
	if duration == 0 {
		duration = defaultLeaseDuration
	}
	members := shard.Members{
		Client: mgr.GetClient(), Reader: mgr.GetClient(), Namespace: r.opts.Namespace,
		Identity: r.opts.ReplicaID, Duration: duration,
	}
	r.shards = shard.NewCoordinator(members, shard.Work{
		Apps:  r.shardApps,
		Stop:  r.giveUp,
		Start: func(name string) { r.enqueue(r.opts.Namespace, name) },
		Assigned: func(serving, gained, lost int) {
			r.metrics.SetShardApps(r.opts.ReplicaID, serving)
			r.metrics.ObserveRebalance(r.opts.ReplicaID, gained, lost)
		},
	}, shard.Options{Expected: r.opts.ShardReplicas})
	r.status.SetFieldOwner(shard.FieldManager(r.opts.ReplicaID))
	if err := mgr.Add(r.shards); err != nil {
		return fmt.Errorf("add shard coordinator: %w", err)
	}
	return nil
}

// shardApps lists the apps to assign, each with its pin: the
// wavecd.io/shard annotation, else its destination cluster's `shard`.
func (r *Reconciler) shardApps(ctx context.Context) ([]shard.App, error) {
	var list v1alpha1.ApplicationList
	if err := r.client.List(ctx, &list, client.InNamespace(r.opts.Namespace)); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	clusters, err := cluster.Registry{Reader: r.client, Namespace: r.opts.Namespace}.List(ctx)
	if err != nil {
		clusters = nil // a broken cluster Secret pins nothing
	}
	pins := map[string]int{}
	for _, c := range clusters {
		if c.Shard != nil {
			pins["server:"+c.Server] = int(*c.Shard)
			if c.Name != "" {
				pins["name:"+c.Name] = int(*c.Shard)
			}
		}
	}
	apps := make([]shard.App, 0, len(list.Items))
	for i := range list.Items {
		apps = append(apps, shard.App{Key: list.Items[i].Name, Shard: pinOf(&list.Items[i], pins)})
	}
	return apps, nil
}

func pinOf(app *v1alpha1.Application, clusterPins map[string]int) int {
	if v, ok := app.Annotations[shard.AnnotationShard]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return n
		}
	}
	d := app.Spec.Destination
	if n, ok := clusterPins["server:"+strings.TrimRight(d.Server, "/")]; ok && d.Server != "" {
		return n
	}
	if n, ok := clusterPins["name:"+d.Name]; ok && d.Name != "" {
		return n
	}
	return -1
}

// giveUp stops this replica's work on app name, which another replica
// takes: its running sync stops (the new owner resumes it from the saved
// state), and what the controller remembers of it is dropped.
func (r *Reconciler) giveUp(name string) {
	r.runners.stopWait(name)
	r.status.Forget(name)
	r.compared.forget(name)
	r.metrics.DeleteApp(r.opts.Namespace, name)
}

// serves reports whether this replica reconciles app name (always
// without sharding).
func (r *Reconciler) serves(name string) bool { return r.shards == nil || r.shards.Owns(name) }

// shardChanged tells the Coordinator of an app event that may move apps:
// an app created or deleted, or a change of its pin or destination.
func (r *Reconciler) shardChanged(e any) {
	if r.shards == nil {
		return
	}
	switch e := e.(type) {
	case event.UpdateEvent:
		o, n := e.ObjectOld, e.ObjectNew
		oa, ok1 := o.(*v1alpha1.Application)
		na, ok2 := n.(*v1alpha1.Application)
		if ok1 && ok2 && oa.Annotations[shard.AnnotationShard] == na.Annotations[shard.AnnotationShard] &&
			oa.Spec.Destination == na.Spec.Destination {
			return
		}
	case event.GenericEvent:
		return
	}
	r.shards.Changed()
}
