package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fieldStep is one element of a managed-fields path: a field name, a list
// element chosen by its keys, a set element chosen by value, or an index.
type fieldStep struct {
	field string
	key   map[string]any
	value any
	index int
	kind  byte // 'f', 'k', 'v' or 'i'
}

// managedPaths returns the leaf paths that the given managers own in live,
// read from its managedFields (FieldsV1).
func managedPaths(live *unstructured.Unstructured, managers []string) ([][]fieldStep, error) {
	var out [][]fieldStep
	for _, entry := range live.GetManagedFields() {
		if !slices.Contains(managers, entry.Manager) || entry.FieldsV1 == nil {
			continue
		}
		var tree map[string]any
		if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &tree); err != nil {
			return nil, fmt.Errorf("managed fields of %s: %w", entry.Manager, err)
		}
		leaves, err := fieldLeaves(tree, nil)
		if err != nil {
			return nil, fmt.Errorf("managed fields of %s: %w", entry.Manager, err)
		}
		out = append(out, leaves...)
	}
	return out, nil
}

// fieldLeaves walks a FieldsV1 tree and returns the paths of its leaves.
func fieldLeaves(tree map[string]any, prefix []fieldStep) ([][]fieldStep, error) {
	var out [][]fieldStep
	for k, v := range tree {
		if k == "." {
			continue
		}
		s, err := parseFieldStep(k)
		if err != nil {
			return nil, err
		}
		path := append(slices.Clone(prefix), s)
		child, _ := v.(map[string]any)
		if len(child) == 0 || (len(child) == 1 && child["."] != nil) {
			out = append(out, path)
			continue
		}
		leaves, err := fieldLeaves(child, path)
		if err != nil {
			return nil, err
		}
		out = append(out, leaves...)
	}
	return out, nil
}

func parseFieldStep(k string) (fieldStep, error) {
	prefix, rest, ok := strings.Cut(k, ":")
	if !ok {
		return fieldStep{}, fmt.Errorf("bad field path element %q", k)
	}
	s := fieldStep{kind: prefix[0]}
	switch prefix {
	case "f":
		s.field = rest
	case "k":
		if err := json.Unmarshal([]byte(rest), &s.key); err != nil {
			return s, fmt.Errorf("bad key %q: %w", k, err)
		}
	case "v":
		if err := json.Unmarshal([]byte(rest), &s.value); err != nil {
			return s, fmt.Errorf("bad value %q: %w", k, err)
		}
	case "i":
		i, err := strconv.Atoi(rest)
		if err != nil {
			return s, fmt.Errorf("bad index %q: %w", k, err)
		}
		s.index = i
	default:
		return s, fmt.Errorf("bad field path element %q", k)
	}
	return s, nil
}

// listIndex finds the element of list a keyed, valued or indexed step names.
func (s fieldStep) listIndex(list []any) int {
	switch s.kind {
	case 'i':
		if s.index < len(list) {
			return s.index
		}
	case 'v':
		for i, e := range list {
			if sameValue(e, s.value) {
				return i
			}
		}
	case 'k':
		for i, e := range list {
			m, ok := e.(map[string]any)
			if ok && keysMatch(m, s.key) {
				return i
			}
		}
	}
	return -1
}

func keysMatch(m, keys map[string]any) bool {
	for k, v := range keys {
		if !sameValue(m[k], v) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(ja, jb)
}

// removeManaged deletes the value at a managed-fields path from root.
func removeManaged(root map[string]any, path []fieldStep) {
	var cur any = root
	for i, s := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if s.kind != 'f' {
				return
			}
			if last {
				delete(c, s.field)
				return
			}
			cur = c[s.field]
		case []any:
			idx := s.listIndex(c)
			if idx < 0 {
				return
			}
			if last {
				c[idx] = nil // keep indices of later paths stable
				return
			}
			cur = c[idx]
		default:
			return
		}
	}
}
