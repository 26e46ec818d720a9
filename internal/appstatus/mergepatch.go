package appstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// mergePatch is the JSON merge patch (RFC 7386) from base to app.
func mergePatch(base, app *v1alpha1.Application) ([]byte, error) {
	orig, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	mod, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := objectMergePatch(&out, orig, mod); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// objectMergePatch writes the JSON merge patch from orig to mod, two JSON
// objects as encoding/json writes them (members in a fixed order, no
// spaces, so equal values are equal bytes): a member of equal bytes is
// left out, one mod lacks is null, one that is an object on both sides is
// patched member by member, and any other is mod's value. Values are
// compared as bytes and only the members that changed are read below
// their first level: a patch of decoded documents held both whole as maps
// (18 MB for a root of 5,000 children, at each of its status writes).
func objectMergePatch(out *bytes.Buffer, orig, mod []byte) error {
	o, err := members(orig)
	if err != nil {
		return fmt.Errorf("read the original: %w", err)
	}
	m, err := members(mod)
	if err != nil {
		return fmt.Errorf("read the modified: %w", err)
	}
	origValue := make(map[string][]byte, len(o))
	for _, mb := range o {
		origValue[string(mb.key)] = mb.value
	}
	out.WriteByte('{')
	first := true
	// add writes a member; a nested patch that patches nothing is taken
	// back (a value of mod that is an empty object is not).
	add := func(key []byte, nested bool, value func() error) error {
		mark := out.Len()
		if !first {
			out.WriteByte(',')
		}
		out.Write(key)
		out.WriteByte(':')
		valueAt := out.Len()
		if err := value(); err != nil {
			return err
		}
		if nested && string(out.Bytes()[valueAt:]) == "{}" {
			out.Truncate(mark)
			return nil
		}
		first = false
		return nil
	}
	modKeys := make(map[string]bool, len(m))
	for _, mb := range m {
		modKeys[string(mb.key)] = true
		ov, ok := origValue[string(mb.key)]
		var err error
		switch {
		case ok && bytes.Equal(ov, mb.value):
		case ok && isJSONObject(ov) && isJSONObject(mb.value):
			err = add(mb.key, true, func() error { return objectMergePatch(out, ov, mb.value) })
		default:
			err = add(mb.key, false, func() error { _, err := out.Write(mb.value); return err })
		}
		if err != nil {
			return fmt.Errorf("%s: %w", mb.key, err)
		}
	}
	for _, mb := range o {
		if !modKeys[string(mb.key)] {
			_ = add(mb.key, false, func() error { _, err := out.WriteString("null"); return err })
		}
	}
	out.WriteByte('}')
	return nil
}

// isJSONObject reports whether raw, a JSON value without leading spaces,
// is an object.
func isJSONObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// member is one member of a JSON object: its key as written (quoted) and
// its value.
type member struct{ key, value []byte }

var errNotObject = errors.New("not a JSON object as encoding/json writes it")

// members splits obj, a JSON object without spaces between its tokens (as
// encoding/json writes it), into its members, without decoding them.
func members(obj []byte) ([]member, error) {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, errNotObject
	}
	var out []member
	for i := 1; i < len(obj)-1; {
		keyEnd := valueEnd(obj, i)
		if obj[i] != '"' || keyEnd < 0 || keyEnd >= len(obj) || obj[keyEnd] != ':' {
			return nil, errNotObject
		}
		end := valueEnd(obj, keyEnd+1)
		if end < 0 || end >= len(obj) || obj[end] != ',' && end != len(obj)-1 {
			return nil, errNotObject
		}
		out = append(out, member{key: obj[i:keyEnd], value: obj[keyEnd+1 : end]})
		i = end + 1
	}
	return out, nil
}

// valueEnd returns the index just past the JSON value that starts at i,
// or -1 when it does not end within b.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := valueEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}
