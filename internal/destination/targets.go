package destination

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	stdsync "sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

// Targets resolves app destinations through the registered clusters: the
// in-cluster destination is the local target, built from the controller's
// own configuration; every other cluster gets a target of its own, built on
// first use from its Secret and dropped when the Secret goes or changes.
type Targets struct {
	localCfg *rest.Config
	local    *Target
	registry cluster.Registry

	mu     stdsync.Mutex
	remote map[string]*Target // by server URL
	// listed is the registry's last listing, reused by Resolve while no
	// cluster Secret changed: only when the owner follows the Secrets
	// and calls Prune on each change (FollowClusters). changes counts
	// the Prunes, so a listing read across one is not kept.
	following bool
	listed    *cluster.Listing
	changes   uint64
	// ctx and onNew start the live caches of new remote targets; nil
	// until Start (a comparison outside a controller reads the API server
	// instead).
	ctx   context.Context //nolint:containedctx // the controller's lifetime, for remote informers
	onNew func(schema.GroupKind, toolscache.SharedIndexInformer)
}

// NewTargets builds the registry of destinations: cfg reaches the local
// cluster, registry lists the registered ones.
func NewTargets(cfg *rest.Config, registry cluster.Registry) (*Targets, error) {
	local, err := NewTarget(cfg)
	if err != nil {
		return nil, err
	}
	local.Local, local.Server = true, cluster.InClusterServer
	return &Targets{localCfg: cfg, local: local, registry: registry, remote: map[string]*Target{}}, nil
}

// Local is the target of the cluster the controller runs in.
func (ts *Targets) Local() *Target { return ts.local }

// Start runs the live caches, the local one and those of remote targets
// built from now on, and their watches of CustomResourceDefinitions (for
// the API versions Helm sees), until ctx ends; onNew gets every new
// informer.
func (ts *Targets) Start(ctx context.Context, onNew func(schema.GroupKind, toolscache.SharedIndexInformer)) {
	ts.local.Live.Start(ctx, onNew)
	ts.local.watchCRDs(ctx)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.ctx, ts.onNew = ctx, onNew
}

// Error reports a destination that names no usable cluster; the app's
// spec is invalid until the cluster is registered.
type Error struct {
	App string
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("application destination spec for %s is invalid: %v", e.App, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsError reports an error Resolve returns for a destination that names
// no usable cluster.
func IsError(err error) bool {
	var de *Error
	return errors.As(err, &de)
}

// Resolve returns the registered cluster the app's destination names and
// its target. A destination that names no usable cluster is an *Error;
// other errors are passing (the Secrets could not be listed).
func (ts *Targets) Resolve(ctx context.Context, app *v1alpha1.Application) (*cluster.Cluster, *Target, error) {
	d := app.Spec.Destination
	c, err := ts.listing(ctx).Resolve(d)
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrNotFound), (d.Server == "") == (d.Name == ""):
		return nil, nil, &Error{App: app.Name, Err: err}
	default:
		return nil, nil, err // the cluster Secrets could not be read: try again
	}
	if c.IsInCluster() {
		return c, ts.local, nil
	}
	t, err := ts.remoteFor(c)
	if err != nil {
		return nil, nil, &Error{App: app.Name, Err: err}
	}
	return c, t, nil
}

// FollowClusters says the caller calls Prune on every change of the
// cluster Secrets (its watch of them does): Resolve then reuses one
// listing of the registry until the next Prune, in place of listing the
// Secrets for each app.
func (ts *Targets) FollowClusters() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.following = true
}

// listing is the registry's listing: the one kept, or a new one, kept
// when the Secrets are followed and did not change while it was read.
func (ts *Targets) listing(ctx context.Context) cluster.Listing {
	ts.mu.Lock()
	if l := ts.listed; l != nil {
		ts.mu.Unlock()
		return *l
	}
	changes := ts.changes
	ts.mu.Unlock()
	all, err := ts.registry.List(ctx)
	l := cluster.Listing{All: all, Err: err}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.following && changes == ts.changes && (all != nil || err == nil) {
		ts.listed = &l
	}
	return l
}

// remoteFor returns the target of a remote cluster, building it when it is
// new or its credentials changed.
func (ts *Targets) remoteFor(c *cluster.Cluster) (*Target, error) {
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
	t, err := NewTarget(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Server, err)
	}
	t.Server, t.config = c.Server, c.Config
	if ts.ctx != nil {
		ctx, cancel := context.WithCancel(ts.ctx)
		t.stop = cancel
		t.Live.Start(ctx, ts.onNew)
		t.watchCRDs(ctx)
	}
	ts.remote[c.Server] = t
	return t, nil
}

func (ts *Targets) dropLocked(server string) {
	if t := ts.remote[server]; t != nil && t.stop != nil {
		t.stop()
	}
	delete(ts.remote, server)
}

// Prune drops the remote targets whose cluster is no longer registered,
// or registered with other credentials, stopping their informers, and
// the listing Resolve reuses.
func (ts *Targets) Prune(ctx context.Context) error {
	ts.mu.Lock()
	ts.listed = nil
	ts.changes++
	ts.mu.Unlock()
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
