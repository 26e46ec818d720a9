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
	return objectMergePatch(orig, mod)
}

// objectMergePatch is the JSON merge patch from orig to mod, two JSON
// objects as encoding/json writes them (members in a fixed order, no
// spaces, so equal values are equal bytes): a member of equal bytes is
// left out, one mod lacks is null, one that is an object on both sides is
// patched member by member (and left out when that patches nothing), and
// any other is mod's value. Values are compared as bytes and only the
// members that changed are read below their first level: a patch of
// decoded documents held both whole as maps (18 MB for a root of 5,000
// children, at each of its status writes).
func objectMergePatch(orig, mod []byte) ([]byte, error) {
	o, err := members(orig)
	if err != nil {
		return nil, fmt.Errorf("read the original: %w", err)
	}
	m, err := members(mod)
	if err != nil {
		return nil, fmt.Errorf("read the modified: %w", err)
	}
	origValue := make(map[string][]byte, len(o))
	for _, mb := range o {
		origValue[string(mb.key)] = mb.value
	}
	var patch []member
	for _, mb := range m {
		ov, ok := origValue[string(mb.key)]
		switch {
		case ok && bytes.Equal(ov, mb.value):
		case ok && isJSONObject(ov) && isJSONObject(mb.value):
			sub, err := objectMergePatch(ov, mb.value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", mb.key, err)
			}
			if !emptyPatch(sub) {
				patch = append(patch, member{key: mb.key, value: sub})
			}
		default:
			patch = append(patch, mb)
		}
		delete(origValue, string(mb.key))
	}
	for _, mb := range o {
		if _, removed := origValue[string(mb.key)]; removed {
			patch = append(patch, member{key: mb.key, value: jsonNull})
		}
	}
	return writeObject(patch), nil
}

// jsonNull is a merge patch's value for a member to remove.
var jsonNull = []byte("null")

// writeObject writes members as a JSON object.
func writeObject(members []member) []byte {
	var out bytes.Buffer
	out.WriteByte('{')
	for i, mb := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(mb.key)
		out.WriteByte(':')
		out.Write(mb.value)
	}
	out.WriteByte('}')
	return out.Bytes()
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
