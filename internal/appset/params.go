package appset

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// params is one parameter set a generator yields. With fasttemplate every
// value is a string and nested data has dotted keys ("cluster.name"); with
// goTemplate values keep their structure.
type params = map[string]any

var invalidDNSChars = regexp.MustCompile(`[^-a-z0-9.]`)

// normalize makes s usable as a DNS subdomain name the way Argo CD's
// `normalize` does: lower case, characters other than [-a-z0-9.] replaced
// by '-', at most 253 characters, no leading or trailing '-' or '.'.
func normalize(s string) string {
	s = invalidDNSChars.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 253 {
		s = s[:253]
	}
	return strings.Trim(s, "-.")
}

// flatten returns p with nested maps and lists spelled as dotted keys
// ("a.b", "list.0") and every value as a string, for fasttemplate and for
// selectors.
func flatten(p params) map[string]string {
	out := map[string]string{}
	flattenInto(out, "", p)
	return out
}

func flattenInto(out map[string]string, prefix string, v any) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			flattenInto(out, join(k), x)
		}
	case map[string]string:
		for k, x := range v {
			out[join(k)] = x
		}
	case []any:
		for i, x := range v {
			flattenInto(out, join(strconv.Itoa(i)), x)
		}
	case []string:
		for i, x := range v {
			out[join(strconv.Itoa(i))] = x
		}
	default:
		if prefix != "" {
			out[prefix] = scalarString(v)
		}
	}
}

// scalarString spells a JSON scalar as a parameter value.
func scalarString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// stringParams turns a parsed object into fasttemplate parameters.
func stringParams(obj map[string]any) params {
	out := params{}
	for k, v := range flatten(obj) {
		out[k] = v
	}
	return out
}

// mergeParams merges src into dst, recursing into nested maps; values of
// src win where both have one (override), or only fill what dst lacks.
func mergeParams(dst, src map[string]any, override bool) {
	for k, sv := range src {
		dv, ok := dst[k]
		dm, dIsMap := asMap(dv)
		sm, sIsMap := asMap(sv)
		switch {
		case ok && dIsMap && sIsMap:
			merged := maps.Clone(dm)
			mergeParams(merged, sm, override)
			dst[k] = merged
		case !ok || override:
			dst[k] = sv
		}
	}
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[string]string:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = x
		}
		return out, true
	}
	return nil, false
}

// cloneParams copies p deeply enough that merging into the copy leaves p
// unchanged.
func cloneParams(p params) params {
	out := make(params, len(p))
	for k, v := range p {
		if m, ok := asMap(v); ok {
			out[k] = cloneParams(m)
			continue
		}
		out[k] = v
	}
	return out
}

// lookup finds a dotted key: as a flat key first (fasttemplate), then as
// a path through nested maps (goTemplate).
func lookup(p params, key string) (any, bool) {
	if v, ok := p[key]; ok {
		return v, true
	}
	var cur any = p
	for _, part := range strings.Split(key, ".") {
		m, ok := asMap(cur)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// selectorMatches evaluates a label selector against flattened parameters
// or labels. Unlike Kubernetes label selectors, values are not validated,
// so they can be URLs or paths.
func selectorMatches(sel *metav1.LabelSelector, labels map[string]string) (bool, error) {
	if sel == nil {
		return true, nil
	}
	for k, v := range sel.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false, nil
		}
	}
	for _, e := range sel.MatchExpressions {
		got, has := labels[e.Key]
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if !has || !slices.Contains(e.Values, got) {
				return false, nil
			}
		case metav1.LabelSelectorOpNotIn:
			if has && slices.Contains(e.Values, got) {
				return false, nil
			}
		case metav1.LabelSelectorOpExists:
			if !has {
				return false, nil
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if has {
				return false, nil
			}
		default:
			return false, fmt.Errorf("selector: operator %q is not one of In, NotIn, Exists, DoesNotExist", e.Operator)
		}
	}
	return true, nil
}

// emptySelector reports a selector that selects everything.
func emptySelector(sel *metav1.LabelSelector) bool {
	return sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0)
}

// appendValues renders a generator's `values` with the set's parameters
// (over base, the enclosing matrix's, when there is one) and adds them as
// `values.<key>` (fasttemplate) or under `values` (goTemplate).
func appendValues(p params, values map[string]string, base params, r *renderer) error {
	if len(values) == 0 {
		return nil
	}
	data := p
	if base != nil {
		data = cloneParams(base)
		mergeParams(data, p, true)
	}
	rendered := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v, err := r.render(values[k], data)
		if err != nil {
			return fmt.Errorf("values.%s: %w", k, err)
		}
		rendered[k] = v
	}
	if r.goTemplate {
		p["values"] = rendered
		return nil
	}
	for k, v := range rendered {
		p["values."+k] = v
	}
	return nil
}
