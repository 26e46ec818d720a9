package source

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzJoin resolves any path against a few bases: what it returns is a
// clean path inside the repository, whatever the input.
func FuzzJoin(f *testing.F) {
	for _, seed := range []string{"values.yaml", "../x", "a/../../b", "/etc/passwd", "//x/../..", `..\..\x`,
		"a/./b/../c", "https://example.com/v.yaml", "....//...", "a\x00b", "./", ""} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, p string, absFromRoot bool) {
		for _, base := range []string{".", "charts/app", "a/b/c"} {
			got, err := Join(base, p, JoinOptions{AbsoluteFromRoot: absFromRoot})
			if err != nil {
				continue
			}
			if got != path.Clean(got) || path.IsAbs(got) || got == ".." || strings.HasPrefix(got, "../") {
				t.Fatalf("Join(%q, %q) = %q: not a clean path inside the repository", base, p, got)
			}
		}
	})
}

// FuzzTreeResolve resolves any name in a folder with symlinks inside,
// outside, in loops and chains: a name that resolves names an entry of the
// tree, and a name through a link that leaves it is an error.
func FuzzTreeResolve(f *testing.F) {
	dir := f.TempDir()
	outside := f.TempDir()
	for name, target := range map[string]string{
		"app/cm.yaml": "", "app/values.yaml": "", "charts/c/Chart.yaml": "",
		"link-in": "app", "link-file": "app/cm.yaml", "link-out": outside, "link-up": "..",
		"app/sneaky": "../../", "loop-a": "loop-b", "loop-b": "loop-a", "chain": "link-in/../link-file",
		"abs": "/etc/passwd",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		var err error
		if target == "" {
			err = os.WriteFile(p, []byte("a: b\n"), 0o644)
		} else {
			err = os.Symlink(target, p)
		}
		if err != nil {
			f.Fatal(err)
		}
	}
	tree, err := ReadDir(f.Context(), dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"app/cm.yaml", "link-in/cm.yaml", "link-out/x", "link-up/etc", "app/sneaky/x",
		"loop-a", "chain", "abs", "link-in/../link-out", "."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := tree.Resolve(name)
		if err != nil {
			return
		}
		if _, ok := tree.entries[got]; !ok {
			t.Fatalf("Resolve(%q) = %q, which is not in the tree", name, got)
		}
		if strings.HasPrefix(got, "..") || path.IsAbs(got) {
			t.Fatalf("Resolve(%q) = %q leaves the tree", name, got)
		}
		if data, err := tree.ReadFile(got); err == nil && string(data) != "a: b\n" {
			t.Fatalf("ReadFile(%q) read %q, not a file of the tree", got, data)
		}
	})
}
