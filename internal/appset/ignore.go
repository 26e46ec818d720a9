package appset

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// keepIgnored makes the fields the set's ignoreApplicationDifferences
// rules name in want (the app as generated, a JSON tree) equal to live's:
// live's value where live has the field, no field where it has none. So
// users may change those fields and the set leaves them alone. Rules with
// a name apply to that app only.
func keepIgnored(rules []v1alpha1.ApplicationSetResourceIgnoreDifferences, name string, live, want any) (any, error) {
	for _, rule := range rules {
		if rule.Name != "" && rule.Name != name {
			continue
		}
		var paths [][]any
		for _, ptr := range rule.JSONPointers {
			p, err := parsePointer(ptr)
			if err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
		for _, expr := range rule.JQPathExpressions {
			ps, err := jqPaths(expr, live, want)
			if err != nil {
				return nil, err
			}
			paths = append(paths, ps...)
		}
		for _, p := range paths {
			if v, ok := getAt(live, p); ok {
				want = setAt(want, p, v)
			} else {
				want = deleteAt(want, p)
			}
		}
	}
	return want, nil
}

// parsePointer splits an RFC 6901 JSON pointer into path tokens.
func parsePointer(ptr string) ([]any, error) {
	if ptr == "" {
		return nil, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("ignoreApplicationDifferences: JSON pointer %q must start with /", ptr)
	}
	var out []any
	for _, tok := range strings.Split(ptr[1:], "/") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	return out, nil
}

// jqPaths returns the paths a jq path expression selects in live and in
// want. An expression that fails on a document selects nothing there.
func jqPaths(expr string, docs ...any) ([][]any, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: jq path expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: jq path expression %q: %w", expr, err)
	}
	var out [][]any
	for _, doc := range docs {
		iter := code.Run(jqInput(doc))
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			if _, isErr := v.(error); isErr {
				break
			}
			if p, ok := v.([]any); ok {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// jqInput converts json.Number leaves, which gojq does not read, to
// float64 or int.
func jqInput(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jqInput(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jqInput(x)
		}
		return out
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n)
		}
		if f, err := v.Float64(); err == nil {
			return f
		}
	}
	return v
}

// index reads a path token as a list index.
func index(tok any, n int) (int, bool) {
	var i int
	switch t := tok.(type) {
	case int:
		i = t
	case float64:
		i = int(t)
	case string:
		var err error
		if i, err = strconv.Atoi(t); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return i, i >= 0 && i < n
}

func key(tok any) (string, bool) {
	switch t := tok.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	}
	return "", false
}

func getAt(doc any, path []any) (any, bool) {
	cur := doc
	for _, tok := range path {
		switch node := cur.(type) {
		case map[string]any:
			k, ok := key(tok)
			if cur, ok = node[k]; !ok {
				return nil, false
			}
		case []any:
			i, ok := index(tok, len(node))
			if !ok {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// setAt sets the value at path, creating objects on the way; a list index
// out of range leaves doc unchanged.
func setAt(doc any, path []any, v any) any {
	if len(path) == 0 {
		return v
	}
	switch node := doc.(type) {
	case []any:
		if i, ok := index(path[0], len(node)); ok {
			node[i] = setAt(node[i], path[1:], v)
		}
		return node
	case map[string]any:
		if k, ok := key(path[0]); ok {
			node[k] = setAt(node[k], path[1:], v)
		}
		return node
	case nil:
		if k, ok := key(path[0]); ok {
			return map[string]any{k: setAt(nil, path[1:], v)}
		}
	}
	return doc
}

func deleteAt(doc any, path []any) any {
	if len(path) == 0 {
		return nil
	}
	switch node := doc.(type) {
	case map[string]any:
		k, ok := key(path[0])
		if !ok {
			return node
		}
		if len(path) == 1 {
			delete(node, k)
		} else if child, exists := node[k]; exists {
			node[k] = deleteAt(child, path[1:])
		}
		return node
	case []any:
		i, ok := index(path[0], len(node))
		if !ok {
			return node
		}
		if len(path) == 1 {
			return append(node[:i:i], node[i+1:]...)
		}
		node[i] = deleteAt(node[i], path[1:])
		return node
	}
	return doc
}
