package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// child decodes the i-th child generator of a matrix or merge; it must set
// exactly one generator. Its `template` is ignored, as in Argo CD.
func child(n *v1alpha1.NestedGenerators, i int, at string) (*v1alpha1.ApplicationSetGenerator, string, string, error) {
	at = fmt.Sprintf("%s.generators[%d]", at, i)
	gen := &v1alpha1.ApplicationSetGenerator{}
	if err := json.Unmarshal(n.Generators[i].Raw, gen); err != nil {
		return nil, "", at, fmt.Errorf("%s: %w", at, err)
	}
	kinds := kindsOf(gen)
	switch len(kinds) {
	case 0:
		return nil, "", at, fmt.Errorf("%s: %w", at, errNoGenerator(gen))
	case 1:
		return gen, kinds[0], at + "." + kinds[0], nil
	}
	return nil, "", at, fmt.Errorf("%s: found more than one generator (%v); set one per entry", at, kinds)
}

// matrix combines every parameter set of its first child with every set
// its second child yields when rendered with that set. Where both define a
// parameter, fasttemplate requires equal values and goTemplate keeps the
// first child's.
func (g *generation) matrix(m *v1alpha1.NestedGenerators, at string) ([]params, error) {
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("a matrix combines exactly two generators, found %d", len(m.Generators))
	}
	first, firstKind, firstAt, err := child(m, 0, at)
	if err != nil {
		return nil, err
	}
	second, secondKind, secondAt, err := child(m, 1, at)
	if err != nil {
		return nil, err
	}
	as, err := g.paramsOf(first, firstKind, firstAt, nil)
	if err != nil {
		return nil, err
	}
	var out []params
	for _, a := range as {
		bs, err := g.paramsOf(second, secondKind, secondAt, a)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			p, err := g.combine(a, b)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func (g *generation) combine(a, b params) (params, error) {
	if g.r.goTemplate {
		p := cloneParams(b)
		mergeParams(p, a, true)
		return p, nil
	}
	p := make(params, len(a)+len(b))
	for k, v := range a {
		p[k] = v
	}
	for _, k := range sortedKeys(b) {
		if av, ok := p[k]; ok && !reflect.DeepEqual(av, b[k]) {
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %v, b: %v", k, av, b[k])
		}
		p[k] = b[k]
	}
	return p, nil
}

// merge starts from the first child's parameter sets and, for each later
// child, overrides the sets whose mergeKeys values are equal with that
// child's set. Sets of later children that match none are dropped.
func (g *generation) merge(m *v1alpha1.NestedGenerators, at string) ([]params, error) {
	if len(m.Generators) < 2 {
		return nil, fmt.Errorf("a merge needs two or more generators, found %d", len(m.Generators))
	}
	if len(m.MergeKeys) == 0 {
		return nil, errors.New("a merge needs at least one of mergeKeys")
	}
	var base []params
	var baseKeys []string
	for i := range m.Generators {
		gen, kind, childAt, err := child(m, i, at)
		if err != nil {
			return nil, err
		}
		sets, err := g.paramsOf(gen, kind, childAt, nil)
		if err != nil {
			return nil, err
		}
		byKey, keys, err := indexByMergeKeys(sets, m.MergeKeys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", childAt, err)
		}
		if i == 0 {
			base, baseKeys = sets, keys
			continue
		}
		for j, k := range baseKeys {
			if over, ok := byKey[k]; ok {
				merged := cloneParams(base[j])
				mergeParams(merged, over, true)
				base[j] = merged
			}
		}
	}
	return base, nil
}

// indexByMergeKeys keys each set by its mergeKeys values; two sets with
// the same values are an error.
func indexByMergeKeys(sets []params, mergeKeys []string) (map[string]params, []string, error) {
	names := slices.Clone(mergeKeys)
	slices.Sort(names)
	names = slices.Compact(names)
	byKey := make(map[string]params, len(sets))
	keys := make([]string, len(sets))
	for i, p := range sets {
		values := make(map[string]any, len(names))
		for _, name := range names {
			values[name], _ = lookup(p, name)
		}
		raw, err := json.Marshal(values)
		if err != nil {
			return nil, nil, err
		}
		k := string(raw)
		if _, dup := byKey[k]; dup {
			return nil, nil, fmt.Errorf("the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique. Duplicate key was %s", k)
		}
		byKey[k], keys[i] = p, k
	}
	return byKey, keys, nil
}

func sortedKeys(p params) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
