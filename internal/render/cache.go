package render

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/source"
)

// Cache is a bounded in-memory LRU of render results keyed by commit SHA,
// a hash of the source spec and the destination capabilities. A result is
// deep-copied when stored; a hit shares the stored objects (see Result), so
// it costs microseconds.
//
// It is bounded by the bytes of manifests its results were rendered from
// as much as by entries: an installation of many small apps keeps each
// app's render (a periodic refresh then renders nothing), one of a few
// big charts keeps as many as fit.
type Cache struct {
	mu     sync.Mutex
	limits CacheLimits
	bytes  int64
	ll     *list.List
	items  map[string]*list.Element
}

// Default bounds of the render cache: about one entry per source of
// every app of a big installation, and tens of MiB of manifests.
const (
	DefaultCacheEntries       = 20000
	DefaultCacheBytes   int64 = 32 << 20
)

// CacheLimits bound a Cache; an entry is evicted, least recently used
// first, while either is exceeded (the newest entry is always kept).
type CacheLimits struct {
	// Entries is the most results kept.
	Entries int
	// Bytes is the most bytes of rendered manifests (Result.Size) kept.
	Bytes int64
}

type cacheEntry struct {
	key string
	res *Result
	// caps is the Capabilities.Key the result was rendered with, when
	// its renderer reads them (Helm, Kustomize, plugins); "" for one
	// that does not (Directory), which any capabilities may reuse.
	caps string
}

// NewCache returns a cache within limits; a zero limit is no limit.
func NewCache(limits CacheLimits) *Cache {
	return &Cache{limits: limits, ll: list.New(), items: map[string]*list.Element{}}
}

// Get returns the result stored under key for a destination whose
// Capabilities.Key is caps. Its slices are fresh, its objects shared and
// read-only.
func (c *Cache) Get(key, caps string) (*Result, bool) {
	c.mu.Lock()
	el, ok := c.items[key]
	if ok {
		ok = el.Value.(*cacheEntry).caps == "" || el.Value.(*cacheEntry).caps == caps
	}
	if ok {
		c.ll.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	r := el.Value.(*cacheEntry).res
	return &Result{Objects: slices.Clone(r.Objects), Warnings: slices.Clone(r.Warnings), Revisions: slices.Clone(r.Revisions), Types: slices.Clone(r.Types), Size: r.Size}, true
}

// Put stores a copy of res under key, rendered with capabilities caps
// ("" when its renderer reads none), evicting the least recently used
// entry when full.
func (c *Cache) Put(key, caps string, res *Result) {
	stored := res.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		e := el.Value.(*cacheEntry)
		c.bytes += stored.Size - e.res.Size
		e.res, e.caps = stored, caps
		c.ll.MoveToFront(el)
	} else {
		c.items[key] = c.ll.PushFront(&cacheEntry{key: key, res: stored, caps: caps})
		c.bytes += stored.Size
	}
	for c.ll.Len() > 1 && c.over() {
		last := c.ll.Back()
		c.ll.Remove(last)
		e := last.Value.(*cacheEntry)
		delete(c.items, e.key)
		c.bytes -= e.res.Size
	}
}

// over reports whether the cache holds more than its limits allow.
func (c *Cache) over() bool {
	return c.limits.Entries > 0 && c.ll.Len() > c.limits.Entries || c.limits.Bytes > 0 && c.bytes > c.limits.Bytes
}

// Len is the number of cached results.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// DeepCopy returns a copy of r whose objects the caller may modify.
func (r *Result) DeepCopy() *Result {
	out := &Result{
		Objects:   make([]*unstructured.Unstructured, len(r.Objects)),
		Warnings:  slices.Clone(r.Warnings),
		Revisions: slices.Clone(r.Revisions),
		Types:     slices.Clone(r.Types),
		Size:      r.Size,
	}
	for i, o := range r.Objects {
		out.Objects[i] = o.DeepCopy()
	}
	return out
}

// cacheKey hashes everything a render depends on but the destination's
// capabilities (the entry records those, for the renderers that read
// them), plugins identifying the configured plugins. A source is
// cacheable only when every tree it reads is a commit (not a local
// folder) and, for a Helm repository chart, when its version is exact.
func cacheKey(req *Request, plugins string) (string, bool) {
	k := struct {
		Revision  string
		Refs      map[string]string
		App       string
		NS        string
		Project   string
		Source    any
		Plugins   string
		Kustomize KustomizeSettings
	}{App: req.AppName, NS: req.Namespace, Project: req.Project, Source: req.Source, Refs: map[string]string{}, Plugins: plugins,
		Kustomize: req.Kustomize}
	rev, ok := source.KindOf(&req.Source).CacheRevision(&req.Source, req.Tree)
	if !ok {
		return "", false
	}
	k.Revision = rev
	for name, t := range req.Refs {
		if t.Revision() == "" {
			return "", false
		}
		k.Refs[name] = t.Revision()
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), true
}
