package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// IgnoreRule is one entry of Argo CD's ignoreDifferences (an app's, or
// argocd-cm's resource.customizations.ignoreDifferences): the fields of
// matching objects that do not count as differences.
type IgnoreRule = v1alpha1.ResourceIgnoreDifferences

// ReadsManagedFields reports whether a rule names field managers: it then
// finds their fields in a live object's managedFields, which the caches
// and a sync's kept writes otherwise drop.
func ReadsManagedFields(rules []IgnoreRule) bool {
	return slices.ContainsFunc(rules, func(r IgnoreRule) bool { return len(r.ManagedFieldsManagers) > 0 })
}

func matches(r IgnoreRule, obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	any := func(want, got string) bool { return want == "" || want == "*" || want == got }
	return any(r.Group, gvk.Group) && any(r.Kind, gvk.Kind) && any(r.Name, obj.GetName()) && any(r.Namespace, obj.GetNamespace())
}

// Matching returns the rules that select obj.
func Matching(rules []IgnoreRule, obj *unstructured.Unstructured) []IgnoreRule {
	var out []IgnoreRule
	for _, r := range rules {
		if matches(r, obj) {
			out = append(out, r)
		}
	}
	return out
}

// ignore removes from obj (already a copy) the fields the rules ignore.
func ignore(obj, live *unstructured.Unstructured, rules []IgnoreRule) (*unstructured.Unstructured, error) {
	for _, r := range rules {
		for _, p := range r.JSONPointers {
			segments, err := parsePointer(p)
			if err != nil {
				return nil, err
			}
			removePath(obj.Object, segments)
		}
		if live != nil && len(r.ManagedFieldsManagers) > 0 {
			paths, err := managedPaths(live, r.ManagedFieldsManagers)
			if err != nil {
				return nil, err
			}
			for _, p := range paths {
				removeManaged(obj.Object, p)
			}
		}
		for _, expr := range r.JQPathExpressions {
			out, err := jqDelete(obj.Object, expr)
			if err != nil {
				return nil, err
			}
			obj.Object = out
		}
	}
	dropEmpty(obj.Object)
	return obj, nil
}

// dropEmpty removes the empty maps and lists that removing ignored fields
// leaves behind (and the nil list elements removeManaged leaves), so
// "limits: {}" and no limits compare equal.
func dropEmpty(m map[string]any) {
	for k, v := range m {
		if v, keep := compact(v); keep {
			m[k] = v
		} else {
			delete(m, k)
		}
	}
}

// compact returns v without empty maps and lists, and whether anything is left.
func compact(v any) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		dropEmpty(c)
		return c, len(c) > 0
	case []any:
		var kept []any
		for _, e := range c {
			if e, keep := compact(e); keep {
				kept = append(kept, e)
			}
		}
		return kept, len(kept) > 0
	case nil:
		return nil, false
	}
	return v, true
}

// RespectIgnored returns a copy of desired in which the fields the rules
// ignore (jsonPointers and jqPathExpressions) hold their live values, or
// are absent when absent live: applying it leaves those fields alone.
func RespectIgnored(desired, live *unstructured.Unstructured, rules []IgnoreRule) (*unstructured.Unstructured, error) {
	out := desired.DeepCopy()
	if live == nil {
		return out, nil
	}
	for _, r := range Matching(rules, desired) {
		var paths [][]string
		for _, p := range r.JSONPointers {
			segments, err := parsePointer(p)
			if err != nil {
				return nil, err
			}
			paths = append(paths, segments)
		}
		for _, expr := range r.JQPathExpressions {
			for _, obj := range []map[string]any{live.Object, out.Object} {
				found, err := jqPaths(obj, expr)
				if err != nil {
					return nil, err
				}
				paths = append(paths, found...)
			}
		}
		for _, p := range paths {
			if v, ok := getPath(live.Object, p); ok {
				setPath(out.Object, p, deepCopy(v))
			} else {
				removePath(out.Object, p)
			}
		}
	}
	return out, nil
}

// parsePointer splits an RFC 6901 pointer into unescaped segments.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("json pointer %q does not start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// step descends one segment into v: a map key, or a list index.
func step(v any, seg string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		child, ok := c[seg]
		return child, ok
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

func getPath(root any, path []string) (any, bool) {
	v := root
	for _, seg := range path {
		var ok bool
		if v, ok = step(v, seg); !ok {
			return nil, false
		}
	}
	return v, len(path) > 0
}

// removePath deletes the value at path; a list element is cut out.
func removePath(root map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	parent, ok := getPath(root, path[:len(path)-1])
	if len(path) == 1 {
		parent, ok = root, true
	}
	if !ok {
		return
	}
	last := path[len(path)-1]
	switch c := parent.(type) {
	case map[string]any:
		delete(c, last)
	case []any:
		if i, err := strconv.Atoi(last); err == nil && i >= 0 && i < len(c) {
			grand := path[:len(path)-1]
			setPath(root, grand, slices.Delete(slices.Clone(c), i, i+1))
		}
	}
}

// setPath sets the value at path, creating maps on the way; a list index
// out of range is left alone.
func setPath(root map[string]any, path []string, value any) {
	if len(path) == 0 {
		return
	}
	var cur any = root
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[seg] = value
				return
			}
			next, ok := c[seg]
			if !ok {
				next = map[string]any{}
				c[seg] = next
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(c) {
				return
			}
			if last {
				c[idx] = value
				return
			}
			cur = c[idx]
		default:
			return
		}
	}
}

func deepCopy(v any) any {
	u := &unstructured.Unstructured{Object: map[string]any{"v": v}}
	return u.DeepCopy().Object["v"]
}
