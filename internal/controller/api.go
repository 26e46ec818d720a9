package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/wavecd/wavecd/internal/application"
)

// Refresh asks for an immediate refresh of one app of this controller's
// namespaces. It only records the request: the refresh runs on the next
// reconcile, which it triggers.
func (c *Controller) Refresh(_ context.Context, namespace, name string, hard bool) error {
	if !c.rec.ns.Enabled(namespace) {
		return fmt.Errorf("application %s/%s: %w", namespace, name, application.NamespaceNotEnabledError(namespace))
	}
	kind := askedRefresh
	if hard {
		kind = hardRefresh
	}
	c.rec.refreshes.mark(c.rec.ns.InstanceName(namespace, name), kind)
	c.rec.enqueue(namespace, name)
	return nil
}

// Refresher requests refreshes of the controller's apps, for the webhook.
// The leader (sharded: the app's replica) refreshes in memory, so a push
// is compared at once; a replica that is not the leader sets the argocd.argoproj.io/refresh annotation
// instead, which the leader acts on.
type Refresher struct {
	c        *Controller
	fallback application.AnnotationRefresher
}

// Refresher returns the controller's Refresher.
func (c *Controller) Refresher() Refresher {
	return Refresher{c: c, fallback: application.AnnotationRefresher{Client: c.mgr.GetClient()}}
}

// Refresh requests a refresh of type t of app namespace/name.
func (r Refresher) Refresh(ctx context.Context, namespace, name string, t application.RefreshType) error {
	if r.c.rec.shards != nil {
		if r.c.rec.shards.Owns(r.c.rec.ns.InstanceName(namespace, name)) {
			return r.c.Refresh(ctx, namespace, name, t == application.RefreshHard)
		}
		return r.fallback.Refresh(ctx, namespace, name, t)
	}
	select {
	case <-r.c.mgr.Elected():
		return r.c.Refresh(ctx, namespace, name, t == application.RefreshHard)
	default:
		return r.fallback.Refresh(ctx, namespace, name, t)
	}
}

// Lister lists the Applications of the controller's namespaces from the
// controller's cache, for the webhook.
func (c *Controller) Lister() application.Lister {
	return application.Lister{Reader: c.mgr.GetClient(), Namespaces: c.rec.ns.Watch(), Enabled: c.rec.ns.Enabled}
}

// AppNamespaces reports whether the apps of namespace ns are the
// controller's (its own namespace, or one application.namespaces match).
func (c *Controller) AppNamespaces(ns string) bool { return c.rec.ns.Enabled(ns) }

// APIReader reads straight from the API server, for objects the
// controller does not cache (the webhook secret).
func (c *Controller) APIReader() client.Reader { return c.mgr.GetAPIReader() }

// AppCache is the controller's cache of the namespace's Applications (and
// of its other kinds), which the controllers beside it read and watch
// instead of keeping copies of every app of their own; an index on it is
// added before the controller starts.
func (c *Controller) AppCache() cache.Cache { return c.mgr.GetCache() }

// Client is the manager's cached client.
func (c *Controller) Client() client.Client { return c.mgr.GetClient() }

// Add runs r beside the controller, started with it and stopped when it
// stops. A runnable that does not implement
// manager.LeaderElectionRunnable runs on the leader only.
func (c *Controller) Add(r manager.Runnable) error {
	if err := c.mgr.Add(r); err != nil {
		return fmt.Errorf("add runnable to the controller: %w", err)
	}
	return nil
}

// Elected is closed once this replica leads (at once without leader
// election).
func (c *Controller) Elected() <-chan struct{} { return c.mgr.Elected() }

// readyWait bounds how long Ready waits for the caches.
const readyWait = time.Second

// Ready reports whether the controller's caches are synced, for /readyz.
func (c *Controller) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	if !c.mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("caches are not synced yet")
	}
	return nil
}
