package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFiles creates files (slash-separated path under dir -> content),
// with the folders they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
