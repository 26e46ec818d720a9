// Package folder writes folders of files for tests. It imports nothing of
// wavecd's, so the tests of every package can use it, those of packages
// internal/testenv itself imports (render) included.
package folder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write creates files (path under dir -> content) under dir, with their
// folders; content "-> target" (or "->target") makes a symlink to target
// instead.
func Write(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			target = strings.TrimLeft(target, " ")
			if err := os.Symlink(target, p); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
