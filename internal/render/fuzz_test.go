package render

import (
	"errors"
	"testing"
)

// FuzzDecodeManifests feeds any bytes to the Directory source's decoder:
// it never panics, returns only objects with an apiVersion and a kind,
// and fails with a ParseError or SizeError naming the file.
func FuzzDecodeManifests(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"---\napiVersion: v1\nkind: A\n---\n# only a comment\n---\napiVersion: v1\nkind: B\n",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}`,
		`[{"apiVersion": "v1", "kind": "A"}, 1, "x"]`,
		"a: &a [1, 2]\nb: [*a, *a, *a]\n",
		"- a\n- b\n",
		"key: [unclosed\n",
		"apiVersion: v1\nkind: X\n--- \napiVersion: v1\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, notObject, err := parseFile("app/f.yaml", data, 64<<10)
		if err != nil {
			var pe *ParseError
			var se *SizeError
			if !errors.As(err, &pe) && !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is neither a ParseError nor a SizeError", err, err)
			}
			return
		}
		if notObject != nil && len(objs) > 0 {
			t.Fatalf("a file both skipped (%v) and with objects", notObject)
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatalf("object without apiVersion or kind: %v", o.Object)
			}
		}
	})
}
