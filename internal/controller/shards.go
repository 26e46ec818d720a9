package controller

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

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
		Apps: r.shardApps,
		Stop: r.giveUp,
		Start: func(key string) {
			app := r.ns.ParseInstanceName(key)
			r.enqueue(app.Namespace, app.Name)
		},
		Assigned: func(serving, gained, lost int) {
			r.metrics.SetShardApps(r.opts.ReplicaID, serving)
			r.metrics.ObserveRebalance(r.opts.ReplicaID, gained, lost)
		},
	}, shard.Options{Expected: r.opts.ShardReplicas})
	r.router.shards = r.shards
	r.status.SetFieldOwner(shard.FieldManager(r.opts.ReplicaID))
	if err := mgr.Add(r.shards); err != nil {
		return fmt.Errorf("add shard coordinator: %w", err)
	}
	return nil
}

// shardApps lists the apps to assign, each with its pin.
func (r *Reconciler) shardApps(ctx context.Context) ([]shard.App, error) {
	return shard.ListApps(ctx, r.client, r.ns)
}

// giveUp stops this replica's work on the app of instance name key, which
// another replica takes: its running sync stops (the new owner resumes it
// from the saved state), and what the controller remembers of it is
// dropped.
func (r *Reconciler) giveUp(key string) {
	app := r.ns.ParseInstanceName(key)
	r.runs.StopWait(key)
	r.status.Forget(app)
	r.compared.forget(key)
	r.comparer.Forget(app)
	r.metrics.DeleteApp(app.Namespace, app.Name)
}
