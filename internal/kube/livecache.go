package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// indexOwner indexes cached objects by the application their tracking
// annotation or instance label names.
const indexOwner = "wavecd-owner"

// LiveCache keeps the live objects of the kinds applications manage in
// watch-fed informers, so a refresh reads its app's objects from memory
// instead of listing a kind across the cluster. Only kinds passed to
// Ensure are cached; ListTracked reads any other kind from the API server.
// managedFields are dropped from cached objects, so a caller that needs
// them (ignoreDifferences by field manager) lists from the API server.
type LiveCache struct {
	cluster *Cluster
	// resync is the informers' resync period (0: none).
	resync time.Duration

	mu     sync.Mutex
	ctx    context.Context
	kinds  map[schema.GroupKind]*liveKind
	onNew  func(schema.GroupKind, cache.SharedIndexInformer)
	failed map[schema.GroupKind]time.Time
}

type liveKind struct {
	res      apiResource
	informer cache.SharedIndexInformer
}

// NewLiveCache returns an empty cache of cluster's objects.
func NewLiveCache(cluster *Cluster) *LiveCache {
	return &LiveCache{cluster: cluster, kinds: map[schema.GroupKind]*liveKind{}, failed: map[schema.GroupKind]time.Time{}}
}

// Start sets the context the informers run in, and onNew, called once for
// every informer the cache starts (to add event handlers). Ensure before
// Start starts nothing.
func (c *LiveCache) Start(ctx context.Context, onNew func(schema.GroupKind, cache.SharedIndexInformer)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx, c.onNew = ctx, onNew
}

// Ensure starts an informer for every kind not cached yet. It returns
// without waiting for the new informers to fill; until they have,
// ListTracked reads those kinds from the API server.
func (c *LiveCache) Ensure(kinds []schema.GroupKind) error {
	return c.ensure(kinds, excluded)
}

// EnsureWatched is Ensure for kinds no app manages but whose changes
// matter to an app's health (EndpointSlices, for readiness gates): those
// are cached too, though ListTracked of all kinds still leaves them out.
func (c *LiveCache) EnsureWatched(kinds []schema.GroupKind) error {
	return c.ensure(kinds, nil)
}

func (c *LiveCache) ensure(kinds []schema.GroupKind, skip map[schema.GroupKind]bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil
	}
	var missing []schema.GroupKind
	for _, gk := range kinds {
		if c.kinds[gk] == nil && time.Since(c.failed[gk]) > 5*time.Second {
			missing = append(missing, gk)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	resources, err := c.cluster.listableOf(missing, skip)
	if err != nil {
		return err
	}
	for _, r := range resources {
		c.startLocked(r)
	}
	for _, gk := range missing {
		if c.kinds[gk] == nil {
			c.failed[gk] = time.Now() // not served (yet): a CRD may come later
		}
	}
	return nil
}

func (c *LiveCache) startLocked(r apiResource) {
	gk := r.gvk.GroupKind()
	inf := dynamicinformer.NewFilteredDynamicInformer(c.cluster.dynamic, r.gvr, metav1.NamespaceAll, c.resync,
		cache.Indexers{indexOwner: ownerIndex}, nil).Informer()
	_ = inf.SetTransform(trimCached(r.gvk))
	c.kinds[gk] = &liveKind{res: r, informer: inf}
	delete(c.failed, gk)
	if c.onNew != nil {
		c.onNew(gk, inf)
	}
	go inf.Run(c.ctx.Done())
}

// trimCached drops managedFields, which only ignoreDifferences by field
// manager reads, and sets the kind, which list items lack.
func trimCached(gvk schema.GroupVersionKind) cache.TransformFunc {
	return func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil)
			u.SetGroupVersionKind(gvk)
		}
		return obj, nil
	}
}

// ownerIndex returns the app names an object's tracking annotation and
// instance label mention; Tracking.Tracks makes the final decision.
func ownerIndex(obj any) ([]string, error) {
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	var out []string
	if id := m.GetAnnotations()[AnnotationTrackingID]; id != "" {
		app, _, _ := strings.Cut(id, ":")
		out = append(out, app)
	}
	if l := m.GetLabels()[LabelInstance]; l != "" && !slices.Contains(out, l) {
		out = append(out, l)
	}
	return out, nil
}

func metaOf(obj any) (metav1.Object, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("cached object %T has no metadata", obj)
	}
	return m, nil
}

// ListTracked returns the live objects of opts.Kinds that tracking says
// belong to the app: from the cache for kinds whose informer has synced,
// from the API server for the others. Returned objects are copies.
func (c *LiveCache) ListTracked(ctx context.Context, tracking Tracking, opts ListOptions) ([]*unstructured.Unstructured, error) {
	if len(opts.Kinds) == 0 {
		return c.cluster.ListTracked(ctx, tracking, opts)
	}
	var uncached []schema.GroupKind
	var out []*unstructured.Unstructured
	for _, gk := range opts.Kinds {
		if excluded[gk] {
			continue // cached for EnsureWatched only
		}
		k := c.synced(ctx, gk)
		if k == nil {
			uncached = append(uncached, gk)
			continue
		}
		objs, err := k.informer.GetIndexer().ByIndex(indexOwner, tracking.AppName)
		if err != nil {
			return nil, fmt.Errorf("read cached %s: %w", gk, err)
		}
		for _, o := range objs {
			u, ok := o.(*unstructured.Unstructured)
			if !ok || !tracking.Tracks(u) || (opts.Namespace != "" && k.res.namespaced && u.GetNamespace() != opts.Namespace) {
				continue
			}
			out = append(out, u.DeepCopy())
		}
	}
	if len(uncached) > 0 {
		rest, err := c.cluster.ListTracked(ctx, tracking, ListOptions{Kinds: uncached, Namespace: opts.Namespace})
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
	}
	sortByRef(out)
	return out, nil
}

// syncWait bounds how long a listing waits for a new informer to fill
// before it reads from the API server instead.
const syncWait = 10 * time.Second

// synced returns the kind's informer once it has filled, waiting for a new
// one (its first list is cheaper than listing per app meanwhile); nil when
// the kind is not cached.
func (c *LiveCache) synced(ctx context.Context, gk schema.GroupKind) *liveKind {
	c.mu.Lock()
	k := c.kinds[gk]
	c.mu.Unlock()
	if k == nil {
		return nil
	}
	if k.informer.HasSynced() {
		return k
	}
	ctx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !k.informer.HasSynced() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	return k
}

// Cached reports whether the cache serves gk now (started and filled).
func (c *LiveCache) Cached(gk schema.GroupKind) bool {
	c.mu.Lock()
	k := c.kinds[gk]
	c.mu.Unlock()
	return k != nil && k.informer.HasSynced()
}

// Exists reports whether the cache holds the object of kind gk named
// namespace/name and is not deleting it; known is false when the cache
// cannot tell (the kind is not cached or not filled yet).
func (c *LiveCache) Exists(gk schema.GroupKind, namespace, name string) (exists, known bool) {
	c.mu.Lock()
	k := c.kinds[gk]
	c.mu.Unlock()
	if k == nil || !k.informer.HasSynced() {
		return false, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := k.informer.GetIndexer().GetByKey(key)
	if err != nil {
		return false, false
	}
	if !ok {
		return false, true
	}
	m, err := metaOf(obj)
	if err != nil {
		return false, false
	}
	return m.GetDeletionTimestamp() == nil, true
}

func sortByRef(objs []*unstructured.Unstructured) {
	slices.SortFunc(objs, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(RefOf(a).String(), RefOf(b).String())
	})
}
