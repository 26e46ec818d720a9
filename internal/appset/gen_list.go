package appset

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// list yields one parameter set per element of `elements`, then of
// `elementsYaml`. With fasttemplate an element's `values` map becomes
// `values.<key>` and nested data dotted keys.
func (g *generation) list(l *v1alpha1.ListGenerator, _ params) ([]params, error) {
	var out []params
	for i, raw := range l.Elements {
		tree, err := decodeTree(raw.Raw)
		if err != nil {
			return nil, fmt.Errorf("elements[%d]: %w", i, err)
		}
		obj, ok := tree.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("elements[%d]: an element must be an object, got %s", i, string(raw.Raw))
		}
		out = append(out, g.elementParams(obj))
	}
	if l.ElementsYaml != "" {
		var elems []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &elems); err != nil {
			return nil, fmt.Errorf("elementsYaml: not a YAML list of objects: %w", err)
		}
		for i, e := range elems {
			// Through JSON, so numbers are json.Number like the elements'.
			tree, err := toTree(e)
			if err != nil {
				return nil, fmt.Errorf("elementsYaml[%d]: %w", i, err)
			}
			obj, _ := tree.(map[string]any)
			out = append(out, g.elementParams(obj))
		}
	}
	return out, nil
}

func (g *generation) elementParams(obj map[string]any) params {
	if g.r.goTemplate {
		if obj == nil {
			return params{}
		}
		return obj
	}
	return stringParams(obj)
}
