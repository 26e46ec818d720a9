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
func RememberMappings(m meta.RESTMapper) meta.RESTMapper {
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
	found sync.Map // mappingKey -> *meta.RESTMapping
}

func mappingKey(gk schema.GroupKind, versions []string) string {
	return gk.Group + "/" + gk.Kind + "@" + strings.Join(versions, ",")
}

// RESTMapping answers a mapping found before from memory. The mapping is
// shared by every caller, who only read it.
func (m *mappingMemory) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey(gk, versions)
	if found, ok := m.found.Load(key); ok {
		return found.(*meta.RESTMapping), nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.found.Store(key, mapping)
	return mapping, nil
}

// foundMappings are the mappings a Cluster's mapper answered, by kind
// and version, until the mapper resets. Mappings are shared by every
// caller, who only read them.
type foundMappings struct {
	mu  sync.RWMutex
	gen uint64
	m   map[schema.GroupVersionKind]*meta.RESTMapping
}

func (f *foundMappings) get(key schema.GroupVersionKind) (*meta.RESTMapping, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m, ok := f.m[key]
	return m, ok
}

// generation is the number of clears so far: a mapping looked up before a
// clear is not kept after it (put).
func (f *foundMappings) generation() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.gen
}

// put keeps m for key, unless the mappings were cleared since gen.
func (f *foundMappings) put(key schema.GroupVersionKind, m *meta.RESTMapping, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen != gen {
		return
	}
	if f.m == nil {
		f.m = map[schema.GroupVersionKind]*meta.RESTMapping{}
	}
	f.m[key] = m
}

// clear forgets every mapping: the mapper discovers the kinds again.
func (f *foundMappings) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.m = nil
}
