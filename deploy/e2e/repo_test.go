package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// readTree returns the files under dir by slash path relative to dir, each
// passed through edit (which may change its content).
func readTree(t *testing.T, dir string, edit func(path, content string) string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		files[rel] = edit(rel, string(b))
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return files
}

// withPrefix returns files with every path under prefix.
func withPrefix(prefix string, files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for p, c := range files {
		out[prefix+"/"+p] = c
	}
	return out
}

// keep is an edit that changes nothing.
func keep(_, content string) string { return content }
