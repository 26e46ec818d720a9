package kube

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// RememberMappings wraps m so that each RESTMapping it found is answered
// from memory afterwards. A controller's cached client asks for the
// mapping of the kind it reads on every Get and List (whether the kind is
// namespaced), and the discovery mapper answers by asking each API group's
// mapper in turn: a few dozen groups, tens of microseconds each time. Only
// mappings found are kept: a kind that does not map yet (a CRD not
// installed) is asked again, and may appear. The mapping of a kind the
// controller reads does not change while it runs (its scope and versions
// are the CRD's, which a controller's own kinds keep).
func RememberMappings(m meta.RESTMapper) meta.ResettableRESTMapper {
	return &mappingMemory{RESTMapper: m}
}

// RememberingMapperProvider is controller-runtime's default mapper
// provider (the lazy discovery mapper) behind RememberMappings, for
// manager.Options.MapperProvider.
func RememberingMapperProvider(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return RememberMappings(m), nil
}

type mappingMemory struct {
	meta.RESTMapper
	found foundMappings
}

// mappingKey names a question to the mapper: a kind and the versions
// asked for (at most one in practice, so the join allocates nothing).
type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

// RESTMapping answers a mapping found before from memory. The mapping is
// shared by every caller, who only read it. A mapping looked up while the
// memory was reset is not kept.
func (m *mappingMemory) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	found, ok, gen := m.found.get(key)
	if ok {
		return found, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.found.put(key, mapping, gen)
	return mapping, nil
}

// Reset forgets every mapping and resets the wrapped mapper when it can
// discover the kinds again (meta.ResettableRESTMapper).
func (m *mappingMemory) Reset() {
	m.found.clear()
	if r, ok := m.RESTMapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}

// foundMappings are the mappings a mapper answered, until it resets.
type foundMappings struct {
	mu  sync.RWMutex
	gen uint64
	m   map[mappingKey]*meta.RESTMapping
}

// get returns the mapping kept for key, and the number of clears so far:
// a mapping looked up after get is kept only if no clear came between
// (put).
func (f *foundMappings) get(key mappingKey) (*meta.RESTMapping, bool, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m, ok := f.m[key]
	return m, ok, f.gen
}

// put keeps m for key, unless the mappings were cleared since gen.
func (f *foundMappings) put(key mappingKey, m *meta.RESTMapping, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen != gen {
		return
	}
	if f.m == nil {
		f.m = map[mappingKey]*meta.RESTMapping{}
	}
	f.m[key] = m
}

// clear forgets every mapping.
func (f *foundMappings) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.m = nil
}
