package kube

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the field manager wavecd writes with.
const FieldManager = "wavecd"

// Ref names one object.
type Ref struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// NoRateLimit is the rest.Config QPS that turns client-go's client-side
// rate limiter off. The API server's priority and fairness paces clients
// instead, as SIG API Machinery advises and controller-runtime defaults
// to: a limit of a hundred requests per second made a bootstrap of 200
// apps wait on itself for half its time.
const NoRateLimit float32 = -1

// DefaultRateLimit leaves a QPS cfg sets alone and turns the client-side
// rate limiter off where cfg sets none (client-go would allow 5 requests
// per second, which throttles every wave and page load).
func DefaultRateLimit(cfg *rest.Config) {
	if cfg.QPS == 0 {
		cfg.QPS = NoRateLimit
	}
}

// NewerVersion reports whether resourceVersion a is newer than b. The API
// server issues them as increasing numbers (etcd revisions); a version
// that is not a number is never newer, and any version is newer than "".
func NewerVersion(a, b string) bool {
	va, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return false
	}
	if b == "" {
		return true
	}
	vb, err := strconv.ParseUint(b, 10, 64)
	return err == nil && va > vb
}

// RefOf returns the reference of obj.
func RefOf(obj *unstructured.Unstructured) Ref {
	return Ref{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String formats the reference as group/Kind namespace/name.
func (r Ref) String() string { return RefString(r.GVK, r.Namespace, r.Name) }

// Cluster is access to one destination cluster. It is safe for concurrent use.
type Cluster struct {
	config    *rest.Config
	dynamic   dynamic.Interface
	discovery discovery.CachedDiscoveryInterface
	// direct is discovery without the cache, for APIVersions.
	direct discovery.DiscoveryInterface
	// mapper is the discovery mapper behind RememberMappings: it asks
	// each API group's mapper in turn, and every comparison and apply
	// asks it for each object.
	mapper meta.ResettableRESTMapper

	resetMu   sync.Mutex
	lastReset time.Time
	// resets counts the mapper's re-discoveries.
	resets atomic.Uint64
}

// DiscoveryResets counts the times the cluster's kinds were discovered
// again (a kind did not map): what depends on which kinds exist, and how
// they are scoped, is stale once it changes.
func (c *Cluster) DiscoveryResets() uint64 { return c.resets.Load() }

// New builds a Cluster from a REST config.
func New(cfg *rest.Config) (*Cluster, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build discovery client: %w", err)
	}
	cached := memory.NewMemCacheClient(disco)
	return &Cluster{
		config:    cfg,
		dynamic:   dyn,
		discovery: cached,
		direct:    disco,
		mapper:    RememberMappings(restmapper.NewDeferredDiscoveryRESTMapper(cached)),
	}, nil
}

// Impersonating returns the cluster whose writes and reads are made as
// user (Kubernetes impersonation: the cluster's own credentials need the
// impersonate verb on it). Discovery and kind mappings are shared with c.
func (c *Cluster) Impersonating(user string) (*Cluster, error) {
	cfg := rest.CopyConfig(c.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client as %s: %w", user, err)
	}
	return &Cluster{config: cfg, dynamic: dyn, discovery: c.discovery, direct: c.direct, mapper: c.mapper}, nil
}

// Dynamic returns the cluster's dynamic client.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dynamic }

// Mapping returns the REST mapping of gvk. A kind that does not map makes
// the mapper re-discover once (at most every half second), for kinds whose
// CRD was created since.
func (c *Cluster) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil || !meta.IsNoMatchError(err) {
		return m, err
	}
	c.resetMu.Lock()
	stale := time.Since(c.lastReset) > 500*time.Millisecond
	if stale {
		c.mapper.Reset()
		c.resets.Add(1)
		c.lastReset = time.Now()
	}
	c.resetMu.Unlock()
	if !stale {
		return nil, err
	}
	return c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// IsNamespaced reports whether objects of gk live in a namespace.
func (c *Cluster) IsNamespaced(gk schema.GroupKind) (bool, error) {
	m, err := c.mapper.RESTMapping(gk)
	if err != nil && meta.IsNoMatchError(err) {
		m, err = c.Mapping(schema.GroupVersionKind{Group: gk.Group, Kind: gk.Kind})
	}
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// resource returns the dynamic client for ref's kind and namespace; the
// namespace is dropped for cluster-scoped kinds.
func (c *Cluster) resource(ref Ref) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.Mapping(ref.GVK)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dynamic.Resource(m.Resource).Namespace(ref.Namespace), m, nil
	}
	return c.dynamic.Resource(m.Resource), m, nil
}

// ResourceFor returns the dynamic client for objects of gvk in namespace
// (ignored for cluster-scoped kinds; empty for all namespaces).
func (c *Cluster) ResourceFor(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	ri, _, err := c.resource(Ref{GVK: gvk, Namespace: namespace})
	return ri, err
}

// Get reads the object ref names; an error satisfying apierrors.IsNotFound
// when it does not exist.
func (c *Cluster) Get(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	ri, _, err := c.resource(ref)
	if err != nil {
		return nil, objectError("get", ref, err)
	}
	obj, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	return obj, objectError("get", ref, err)
}

// GetOptional reads the object ref names; nil without error when it does
// not exist or its kind is unknown.
func (c *Cluster) GetOptional(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	obj, err := c.Get(ctx, ref)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	return obj, err
}
