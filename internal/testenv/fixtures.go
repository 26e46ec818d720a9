package testenv

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Fixtures returns the YAML files of a folder under testdata/, by name
// without the extension, and fails the test when there is none.
func Fixtures(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = b
	}
	return out
}

// EachFixture runs check in one subtest per YAML file of a folder under
// testdata/, in name order, on the file decoded strictly into a new F. A
// folder without fixtures fails the test.
func EachFixture[F any](t *testing.T, dir string, check func(t *testing.T, f *F)) {
	t.Helper()
	files := Fixtures(t, dir)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		t.Run(name, func(t *testing.T) {
			f := new(F)
			if err := yaml.UnmarshalStrict(files[name], f); err != nil {
				t.Fatalf("testdata/%s/%s.yaml: %v", dir, name, err)
			}
			check(t, f)
		})
	}
}
