package health

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// fields reads typed values out of an unstructured object. A value of the wrong
// type reads as absent and is remembered, so a check can fail the way Argo CD's
// conversion to a typed object fails.
type fields struct {
	obj map[string]any
	err error
}

func newFields(obj map[string]any) *fields { return &fields{obj: obj} }

// get walks path and returns the value found, or nil when any step is absent.
func (f *fields) get(path ...string) any {
	var cur any = f.obj
	for i, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			if cur != nil {
				f.mismatch(path[:i], "an object", cur)
			}
			return nil
		}
		cur = m[key]
	}
	return cur
}

func (f *fields) mismatch(path []string, want string, got any) {
	if f.err == nil {
		f.err = fmt.Errorf(".%s: expected %s, got %T", strings.Join(path, "."), want, got)
	}
}

// str returns the string at path, or "" when absent.
func (f *fields) str(path ...string) string {
	v := f.get(path...)
	s, ok := v.(string)
	if !ok && v != nil {
		f.mismatch(path, "a string", v)
	}
	return s
}

// boolean returns the bool at path, or false when absent.
func (f *fields) boolean(path ...string) bool {
	v := f.get(path...)
	b, ok := v.(bool)
	if !ok && v != nil {
		f.mismatch(path, "a boolean", v)
	}
	return b
}

// integer returns the integer at path and whether it was set.
func (f *fields) integer(path ...string) (int64, bool) {
	v := f.get(path...)
	if v == nil {
		return 0, false
	}
	n, ok := toInt64(v)
	if !ok {
		f.mismatch(path, "an integer", v)
	}
	return n, ok
}

// count returns the integer at path, or 0 when absent.
func (f *fields) count(path ...string) int64 {
	n, _ := f.integer(path...)
	return n
}

// list returns the list at path, or nil when absent.
func (f *fields) list(path ...string) []any {
	v := f.get(path...)
	l, ok := v.([]any)
	if !ok && v != nil {
		f.mismatch(path, "a list", v)
	}
	return l
}

// object returns the map at path, or nil when absent.
func (f *fields) object(path ...string) map[string]any {
	v := f.get(path...)
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		f.mismatch(path, "an object", v)
	}
	return m
}

// objects returns the maps in the list at path, skipping items that are not maps.
func (f *fields) objects(path ...string) []map[string]any {
	l := f.list(path...)
	out := make([]map[string]any, 0, len(l))
	for _, item := range l {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		} else {
			f.mismatch(path, "a list of objects", item)
		}
	}
	return out
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// condition is the common shape of a status condition.
type condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
	HasObservedGeneration         bool
}

// conditions reads the list of conditions at path.
func (f *fields) conditions(path ...string) []condition {
	items := f.objects(path...)
	out := make([]condition, 0, len(items))
	for _, item := range items {
		c := newFields(item)
		gen, hasGen := c.integer("observedGeneration")
		out = append(out, condition{
			Type:                  c.str("type"),
			Status:                c.str("status"),
			Reason:                c.str("reason"),
			Message:               c.str("message"),
			ObservedGeneration:    gen,
			HasObservedGeneration: hasGen,
		})
		if c.err != nil && f.err == nil {
			f.err = fmt.Errorf(".%s[]%w", strings.Join(path, "."), c.err)
		}
	}
	return out
}

// findCondition returns the first condition of type t, or nil.
func findCondition(conds []condition, t string) *condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
