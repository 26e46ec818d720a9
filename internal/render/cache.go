package render

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/wavecd/wavecd/internal/source"
)

// Cache is a bounded in-memory LRU of render results keyed by commit SHA,
// a hash of the source spec and the destination capabilities. A result's
// objects are stored as one JSON document and decoded on each hit: a
// ConfigMap kept as JSON is a few hundred bytes in one allocation, kept
// as an object tree ten times that in dozens, which lived on in the heap
// of a big installation (a third of the controller's live heap at 10,000
// apps, scattered over spans that could not be returned). A hit decodes
// in microseconds, and a periodic refresh is the only caller that hits.
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
	// res is the result without its objects, which objects holds as a
	// JSON array.
	res     *Result
	objects []byte
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
// Capabilities.Key is caps, decoded afresh: the caller owns it.
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
	e := el.Value.(*cacheEntry)
	objects, err := decodeObjects(e.objects)
	if err != nil {
		return nil, false
	}
	r := e.res
	return &Result{Objects: objects, Warnings: slices.Clone(r.Warnings), Revisions: slices.Clone(r.Revisions), Types: slices.Clone(r.Types), Size: r.Size}, true
}

// Put stores res under key, rendered with capabilities caps ("" when its
// renderer reads none), evicting the least recently used entry when full.
// A result whose objects do not encode is not stored.
func (c *Cache) Put(key, caps string, res *Result) {
	objects, err := json.Marshal(res.Objects)
	if err != nil {
		return
	}
	stored := &Result{Warnings: slices.Clone(res.Warnings), Revisions: slices.Clone(res.Revisions), Types: slices.Clone(res.Types), Size: res.Size}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		e := el.Value.(*cacheEntry)
		c.bytes += stored.Size - e.res.Size
		e.res, e.objects, e.caps = stored, objects, caps
		c.ll.MoveToFront(el)
	} else {
		c.items[key] = c.ll.PushFront(&cacheEntry{key: key, res: stored, objects: objects, caps: caps})
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

// decodeObjects decodes a JSON array of objects, integers as int64 as the
// API machinery decodes them.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var raw []any
	if err := utiljson.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(raw))
	for i, o := range raw {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cached object %d is not an object", i)
		}
		out[i] = &unstructured.Unstructured{Object: m}
	}
	return out, nil
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
