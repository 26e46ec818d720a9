package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper maps the kinds it was given, counting the questions.
type countingMapper struct {
	meta.RESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func TestRememberMappings(t *testing.T) {
	apps := schema.GroupVersion{Group: "argoproj.io", Version: "v1alpha1"}
	base := meta.NewDefaultRESTMapper([]schema.GroupVersion{apps})
	base.Add(apps.WithKind("Application"), meta.RESTScopeNamespace)
	inner := &countingMapper{RESTMapper: base}
	m := RememberMappings(inner)
	app := schema.GroupKind{Group: "argoproj.io", Kind: "Application"}
	set := schema.GroupKind{Group: "argoproj.io", Kind: "ApplicationSet"}

	for range 3 {
		mapping, err := m.RESTMapping(app, "v1alpha1")
		if err != nil {
			t.Fatal(err)
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace || mapping.Resource.Resource != "applications" {
			t.Fatalf("mapping of Application = %s %s, want namespaced applications", mapping.Scope.Name(), mapping.Resource)
		}
	}
	if inner.asked != 1 {
		t.Errorf("the mapper was asked %d times for one kind, want once", inner.asked)
	}
	if _, err := m.RESTMapping(app); err != nil || inner.asked != 2 {
		t.Errorf("another version list is another question: err %v, asked %d times, want 2", err, inner.asked)
	}

	// A kind that does not map is asked again: its CRD may be installed.
	if _, err := m.RESTMapping(set, "v1alpha1"); !meta.IsNoMatchError(err) {
		t.Fatalf("ApplicationSet before its kind exists: err %v, want no match", err)
	}
	base.Add(apps.WithKind("ApplicationSet"), meta.RESTScopeNamespace)
	if _, err := m.RESTMapping(set, "v1alpha1"); err != nil {
		t.Errorf("ApplicationSet once its kind exists: %v", err)
	}
	if inner.asked != 4 {
		t.Errorf("the mapper was asked %d times, want 4 (a miss is not remembered)", inner.asked)
	}
	// Everything else goes to the wrapped mapper.
	if kinds, err := m.KindsFor(apps.WithResource("applications")); err != nil || len(kinds) != 1 {
		t.Errorf("KindsFor(applications) = %v, %v", kinds, err)
	}
	// A reset forgets what was found: the kind is asked again.
	m.Reset()
	if _, err := m.RESTMapping(app, "v1alpha1"); err != nil || inner.asked != 5 {
		t.Errorf("after a reset: err %v, asked %d times, want 5", err, inner.asked)
	}
}

// The memory keeps the mappings its mapper found until it resets; a
// lookup that began before a reset does not bring its answer back after
// it.
func TestFoundMappings(t *testing.T) {
	cm := mappingKey{gk: schema.GroupKind{Kind: "ConfigMap"}, versions: "v1"}
	mapping := &meta.RESTMapping{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Scope: meta.RESTScopeNamespace}
	// generation is the clears so far, as a lookup sees them.
	generation := func(f *foundMappings) uint64 {
		_, _, gen := f.get(cm)
		return gen
	}
	tests := []struct {
		name  string
		steps func(f *foundMappings)
		want  bool
	}{
		{"nothing found yet", func(*foundMappings) {}, false},
		{"found", func(f *foundMappings) { f.put(cm, mapping, generation(f)) }, true},
		{"found, then cleared", func(f *foundMappings) {
			f.put(cm, mapping, generation(f))
			f.clear()
		}, false},
		{"looked up across a clear", func(f *foundMappings) {
			gen := generation(f)
			f.clear()
			f.put(cm, mapping, gen)
		}, false},
		{"looked up after a clear", func(f *foundMappings) {
			f.clear()
			f.put(cm, mapping, generation(f))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f foundMappings
			tt.steps(&f)
			got, ok, _ := f.get(cm)
			if ok != tt.want || ok && got != mapping {
				t.Errorf("get = %v, %v; want found %v", got, ok, tt.want)
			}
		})
	}
}
