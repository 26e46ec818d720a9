package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	stdsync "sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/render"
)

// target is one destination cluster as the controller reaches it: its
// clients, the live cache of the kinds apps manage there, what dry runs
// predicted there, and the server version Helm sees.
type target struct {
	// local is the cluster the controller runs in, reached with the
	// controller's own configuration.
	local bool
	// server is the API server URL the target was built for.
	server string
	// config is the credentials a remote target was built with.
	config      cluster.Config
	kube        *kube.Cluster
	live        *kube.LiveCache
	predictions predictionCache
	versionOnce stdsync.Once
	version     string
	// stop ends a remote target's informers.
	stop context.CancelFunc
}

func newTarget(cfg *rest.Config) (*target, error) {
	k, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	return &target{kube: k, live: kube.NewLiveCache(k)}, nil
}

// capabilities describes the destination for Helm; the version is read
// once, and unknown on error.
func (t *target) capabilities(ctx context.Context) render.Capabilities {
	t.versionOnce.Do(func() {
		v, err := t.kube.ServerVersion()
		if err != nil {
			logctx.From(ctx).Warn("read server version", "server", t.server, "err", err)
			return
		}
		t.version = v
	})
	return render.Capabilities{KubeVersion: t.version}
}

// targets resolves app destinations through the registered clusters: the
// in-cluster destination is the local target, built from the controller's
// own configuration; every other cluster gets a target of its own, built on
// first use from its Secret and dropped when the Secret goes or changes.
type targets struct {
	localCfg *rest.Config
	local    *target
	registry cluster.Registry

	mu     stdsync.Mutex
	remote map[string]*target // by server URL
	// ctx and onNew start the live caches of new remote targets; nil
	// until the controller starts (Diff reads the API server instead).
	ctx   context.Context //nolint:containedctx // the controller's lifetime, for remote informers
	onNew func(schema.GroupKind, toolscache.SharedIndexInformer)
}

func newTargets(cfg *rest.Config, local *target, registry cluster.Registry) *targets {
	local.local, local.server = true, cluster.InClusterServer
	return &targets{localCfg: cfg, local: local, registry: registry, remote: map[string]*target{}}
}

// start runs the live caches, the local one and those of remote targets
// built from now on, until ctx ends; onNew gets every new informer.
func (ts *targets) start(ctx context.Context, onNew func(schema.GroupKind, toolscache.SharedIndexInformer)) {
	ts.local.live.Start(ctx, onNew)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.ctx, ts.onNew = ctx, onNew
}

// destinationError reports a destination that names no usable cluster;
// the app's spec is invalid until the cluster is registered.
type destinationError struct {
	app string
	err error
}

func (e *destinationError) Error() string {
	return fmt.Sprintf("application destination spec for %s is invalid: %v", e.app, e.err)
}

func (e *destinationError) Unwrap() error { return e.err }

// resolve returns the registered cluster the app's destination names and
// its target. A destination that names no usable cluster is a
// *destinationError; other errors are passing (the Secrets could not be
// listed).
func (ts *targets) resolve(ctx context.Context, app *v1alpha1.Application) (*cluster.Cluster, *target, error) {
	d := app.Spec.Destination
	c, err := ts.registry.Resolve(ctx, d)
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrNotFound), (d.Server == "") == (d.Name == ""):
		return nil, nil, &destinationError{app: app.Name, err: err}
	default:
		return nil, nil, err // the cluster Secrets could not be read: try again
	}
	if c.IsInCluster() {
		return c, ts.local, nil
	}
	t, err := ts.remoteFor(c)
	if err != nil {
		return nil, nil, &destinationError{app: app.Name, err: err}
	}
	return c, t, nil
}

// remoteFor returns the target of a remote cluster, building it when it is
// new or its credentials changed.
func (ts *targets) remoteFor(c *cluster.Cluster) (*target, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.remote[c.Server]; ok {
		if reflect.DeepEqual(t.config, c.Config) {
			return t, nil
		}
		ts.dropLocked(c.Server)
	}
	cfg, err := c.RESTConfig(ts.localCfg)
	if err != nil {
		return nil, err
	}
	t, err := newTarget(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Server, err)
	}
	t.server, t.config = c.Server, c.Config
	if ts.ctx != nil {
		ctx, cancel := context.WithCancel(ts.ctx)
		t.stop = cancel
		t.live.Start(ctx, ts.onNew)
	}
	ts.remote[c.Server] = t
	return t, nil
}

func (ts *targets) dropLocked(server string) {
	if t := ts.remote[server]; t != nil && t.stop != nil {
		t.stop()
	}
	delete(ts.remote, server)
}

// prune drops the remote targets whose cluster is no longer registered,
// or registered with other credentials, stopping their informers.
func (ts *targets) prune(ctx context.Context) error {
	all, err := ts.registry.List(ctx)
	if all == nil && err != nil {
		return err
	}
	current := map[string]cluster.Config{}
	for _, c := range all {
		if !c.IsInCluster() {
			current[c.Server] = c.Config
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for server, t := range ts.remote {
		if cfg, ok := current[server]; !ok || !reflect.DeepEqual(cfg, t.config) {
			ts.dropLocked(server)
		}
	}
	return nil
}

// isDestinationError reports an error resolve returns.
func isDestinationError(err error) bool {
	var de *destinationError
	return errors.As(err, &de)
}

// clusterEvents follows the cluster Secrets: targets of clusters that
// went away or changed are dropped, and the apps whose destination names
// the Secret's server or name are reconciled (an unknown destination
// becomes valid, a removed one invalid).
func (r *Reconciler) clusterEvents(ctx context.Context, obj client.Object) []reconcile.Request {
	if err := r.targets.prune(ctx); err != nil {
		logctx.From(ctx).Warn("read cluster secrets", "err", err)
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	server := strings.TrimRight(strings.TrimSpace(string(s.Data["server"])), "/")
	name := strings.TrimSpace(string(s.Data["name"]))
	apps := &v1alpha1.ApplicationList{}
	if err := r.client.List(ctx, apps, client.InNamespace(r.opts.Namespace)); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range apps.Items {
		d := apps.Items[i].Spec.Destination
		if (d.Server != "" && strings.TrimRight(d.Server, "/") == server) || (d.Name != "" && d.Name == name) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])})
		}
	}
	return reqs
}
