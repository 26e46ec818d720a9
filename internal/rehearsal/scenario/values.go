package scenario

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
)

// valueRange is a range to draw values from: durations, or whole numbers.
type valueRange struct {
	lo, hi  int64
	numbers bool
}

// parseRange parses "1s-6s" or "1-6".
func parseRange(r string) (valueRange, error) {
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return valueRange{}, fmt.Errorf("%q: want a range of durations such as 1s-6s, or of whole numbers such as 1-6", r)
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	var vr valueRange
	if lo, err := strconv.ParseInt(a, 10, 32); err == nil {
		hi, err := strconv.ParseInt(b, 10, 32)
		if err != nil {
			return valueRange{}, fmt.Errorf("%q: %w", r, err)
		}
		vr = valueRange{lo: lo, hi: hi, numbers: true}
	} else {
		lo, err := time.ParseDuration(a)
		if err != nil {
			return valueRange{}, fmt.Errorf("%q: %w", r, err)
		}
		hi, err := time.ParseDuration(b)
		if err != nil {
			return valueRange{}, fmt.Errorf("%q: %w", r, err)
		}
		vr = valueRange{lo: int64(lo), hi: int64(hi)}
	}
	if vr.hi < vr.lo {
		return valueRange{}, fmt.Errorf("%q: the range ends before it starts", r)
	}
	return vr, nil
}

// Draw picks each randomized value for a run's seed: dotted path ->
// duration string (rounded to 100ms) or whole number.
func (s *Scenario) Draw(seed int64) map[string]any {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	paths := make([]string, 0, len(s.Randomize))
	for p := range s.Randomize {
		paths = append(paths, p)
	}
	slices.Sort(paths) // a seed gives the same values whatever the map order
	out := map[string]any{}
	for _, p := range paths {
		vr, _ := parseRange(s.Randomize[p])
		v := vr.lo + rng.Int64N(vr.hi-vr.lo+1)
		if vr.numbers {
			out[p] = v
			continue
		}
		out[p] = time.Duration(v).Round(100 * time.Millisecond).String()
	}
	return out
}

// setPath sets a dotted path in a nested map, creating the maps on the way.
func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// Values nests the values a run drew (dotted path -> value) into the
// root's Helm values.
func Values(drawn map[string]any) map[string]any {
	values := map[string]any{}
	for path, v := range drawn {
		setPath(values, path, v)
	}
	return values
}

// Root returns the root manifest objs with the value file of s added to
// each root Application's Helm valueFiles and values merged into its
// valuesObject.
func Root(objs []*unstructured.Unstructured, s *Scenario, values map[string]any) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		out = append(out, o)
		if !manifest.IsApplication(o) {
			continue
		}
		path, _, _ := unstructured.NestedString(o.Object, "spec", "source", "path")
		rel, err := filepath.Rel(filepath.FromSlash(path), s.Path)
		if err != nil {
			return nil, fmt.Errorf("root %s: scenario %s relative to %s: %w", o.GetName(), s.Path, path, err)
		}
		files, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "source", "helm", "valueFiles")
		files = append(files, filepath.ToSlash(rel))
		if err := unstructured.SetNestedStringSlice(o.Object, files, "spec", "source", "helm", "valueFiles"); err != nil {
			return nil, fmt.Errorf("root %s: %w", o.GetName(), err)
		}
		if len(values) == 0 {
			continue
		}
		obj, _, _ := unstructured.NestedMap(o.Object, "spec", "source", "helm", "valuesObject")
		if obj == nil {
			obj = map[string]any{}
		}
		mergeValues(obj, values)
		if err := unstructured.SetNestedMap(o.Object, obj, "spec", "source", "helm", "valuesObject"); err != nil {
			return nil, fmt.Errorf("root %s: %w", o.GetName(), err)
		}
	}
	return out, nil
}

// mergeValues lays src over dst, map by map.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		sm, ok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if ok && dok {
			mergeValues(dm, sm)
			continue
		}
		dst[k] = v
	}
}
