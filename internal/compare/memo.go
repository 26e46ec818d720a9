package compare

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"reflect"
	"slices"
	stdsync "sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/health"
)

// memo remembers the outcome of each app's last comparison together with
// what it was computed from, so a periodic refresh that finds nothing
// changed skips the diff, the dry-run lookups and the health rules. What a
// comparison reads, and the key covers:
//   - the app's spec, annotations (compare options) and whether it ever
//     synced;
//   - the settings and the destination, by identity (both are replaced
//     when they change), and how often the destination's kinds were
//     discovered again (a CRD that appeared);
//   - the rendered revisions (the render is a function of them, the spec
//     and the settings);
//   - every live object listed, by kind, name and resourceVersion,
//     children Applications included.
//
// Not memoized: comparisons with objects a sync just applied, hard
// refreshes, and apps whose health waits on Service endpoints (readiness
// gates), which are read from the API server each time.
type memo struct {
	mu      stdsync.Mutex
	entries map[types.NamespacedName]*memoEntry
	// hits counts the comparisons answered from the memo.
	hits atomic.Uint64
}

// memoEntry is one app's last comparison.
type memoEntry struct {
	key memoKey
	// settings and target are held so their addresses cannot be reused
	// by others while the entry names them.
	settings  *Settings
	target    *destination.Target
	spec      v1alpha1.ApplicationSpec
	resources []v1alpha1.ResourceStatus
	sync      v1alpha1.SyncStatusCode
	health    health.Code
}

// memoKey sums up the revisions and live objects a comparison read.
type memoKey [sha256.Size]byte

// memoInputs is what a comparison of app reads, after its render and its
// listing of live objects.
type memoInputs struct {
	app      *v1alpha1.Application
	settings *Settings
	target   *destination.Target
	cmp      *Comparison
}

// keyOf sums up in. ok is false for an app whose comparison is not
// memoized.
func keyOf(in memoInputs) (memoKey, bool) {
	var k memoKey
	if len(gatedServices(in.settings, in.cmp.Live)) > 0 {
		return k, false
	}
	h := sha256.New()
	write := func(s string) {
		_ = binary.Write(h, binary.LittleEndian, uint32(len(s)))
		h.Write([]byte(s))
	}
	write(string(in.app.UID))
	write(in.app.Name)
	keys := slices.Sorted(maps.Keys(in.app.Annotations))
	_ = binary.Write(h, binary.LittleEndian, uint32(len(keys)))
	for _, key := range keys {
		write(key)
		write(in.app.Annotations[key])
	}
	if neverSynced(in.app) {
		write("never synced")
	}
	_ = binary.Write(h, binary.LittleEndian, in.target.Kube.DiscoveryResets())
	for _, r := range in.cmp.Revisions {
		write(r)
	}
	writeVersions(h, write, in.cmp.Live, in.cmp.children)
	h.Sum(k[:0])
	return k, true
}

// writeVersions writes the identity and resourceVersion of every object
// and child Application, in a stable order.
func writeVersions(h hash.Hash, write func(string), objs []*unstructured.Unstructured, children []*v1alpha1.Application) {
	refs := make([]string, 0, len(objs)+len(children))
	for _, o := range objs {
		refs = append(refs, objKey(o)+"@"+o.GetResourceVersion())
	}
	for _, a := range children {
		refs = append(refs, refKey(ApplicationGK, a.Namespace, a.Name)+"@"+a.ResourceVersion)
	}
	slices.Sort(refs)
	_ = binary.Write(h, binary.LittleEndian, uint32(len(refs)))
	for _, r := range refs {
		write(r)
	}
}

// get returns the outcome memoized for in under key, if it is current.
func (m *memo) get(in memoInputs, key memoKey) (*memoEntry, bool) {
	m.mu.Lock()
	e := m.entries[nameOf(in.app)]
	m.mu.Unlock()
	if e == nil || e.key != key || e.settings != in.settings || e.target != in.target || !reflect.DeepEqual(e.spec, in.app.Spec) {
		return nil, false
	}
	m.hits.Add(1)
	return e, true
}

// Memoized counts the comparisons answered with the outcome of the app's
// last one, nothing it was computed from having changed.
func (c *Comparer) Memoized() uint64 { return c.memo.hits.Load() }

// put memoizes in.cmp, the outcome of the comparison in sums up. The key
// is made from the live objects the comparison ended with: a cached copy
// it replaced with the API server's (a cache behind a write) keeps the
// next comparison, which reads the cache again, from matching until the
// cache catches up.
func (m *memo) put(in memoInputs) {
	cmp := in.cmp
	key, ok := keyOf(in)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok {
		delete(m.entries, nameOf(in.app))
		return
	}
	if m.entries == nil {
		m.entries = map[types.NamespacedName]*memoEntry{}
	}
	m.entries[nameOf(in.app)] = &memoEntry{
		key: key, settings: in.settings, target: in.target, spec: *in.app.Spec.DeepCopy(),
		resources: copyResources(cmp.Resources), sync: cmp.Sync, health: cmp.Health.Status,
	}
}

func copyResources(rs []v1alpha1.ResourceStatus) []v1alpha1.ResourceStatus {
	out := make([]v1alpha1.ResourceStatus, len(rs))
	for i := range rs {
		rs[i].DeepCopyInto(&out[i])
	}
	return out
}

// Forget drops what is memoized for an app (it was deleted, or another
// replica owns it now).
func (c *Comparer) Forget(app types.NamespacedName) {
	c.memo.mu.Lock()
	defer c.memo.mu.Unlock()
	delete(c.memo.entries, app)
}

func nameOf(app *v1alpha1.Application) types.NamespacedName {
	return types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
}

// outcome fills cmp, listed and rendered, with e's outcome. The resources
// are copied: the caller puts them into an app's status.
func (e *memoEntry) outcome(cmp *Comparison) {
	cmp.Resources = copyResources(e.resources)
	cmp.Sync = e.sync
	cmp.Health = health.AppHealth{Status: e.health}
	cmp.Memoized = true
}
