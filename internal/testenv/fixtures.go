package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
