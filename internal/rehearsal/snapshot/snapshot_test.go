package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

func TestSnapshotIsReadByTheController(t *testing.T) {
	src := t.TempDir()
	folder.Write(t, src, map[string]string{
		".gitignore":              ".wavecd/\n*.tmp\n",
		"apps/root.yaml":          "kind: Application\n",
		"apps/scratch.tmp":        "ignored",
		"charts/a/values.yaml":    "x: 1\n",
		"charts/a/.gitignore":     "local.yaml\n",
		"charts/a/local.yaml":     "ignored",
		".git/HEAD":               "ref: refs/heads/other\n",
		".wavecd/cluster/x":       "workspace",
		"docs/empty/.placeholder": "",
	})
	if err := os.Symlink("values.yaml", filepath.Join(src, "charts/a/link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "charts/a/values.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "repo")
	sha, err := Write(Options{Src: src, Dst: dst, Exclude: []string{filepath.Join(src, ".wavecd")}, Branches: []string{"release"}})
	if err != nil {
		t.Fatal(err)
	}

	repos := source.NewRepos(source.ReposOptions{Mirrors: source.Mirrors{"https://example.com/r": dst}})
	for _, rev := range []string{"HEAD", "main", "release", sha[:8]} {
		got, err := repos.Resolve(t.Context(), "https://example.com/r.git", rev)
		if err != nil || got != sha {
			t.Errorf("Resolve(%s) = %s, %v; want %s", rev, got, err, sha)
		}
	}
	tree, err := repos.Tree(t.Context(), "https://example.com/r", sha)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "apps/root.yaml", "charts/a/.gitignore", "charts/a/link.yaml", "charts/a/values.yaml", "docs/empty/.placeholder"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files in the snapshot (-want +got):\n%s", diff)
	}
	if b, err := tree.ReadFile("charts/a/link.yaml"); err != nil || string(b) != "x: 1\n" {
		t.Errorf("symlink reads %q, %v", b, err)
	}
}

func TestSnapshotCommitFollowsTheFiles(t *testing.T) {
	src := t.TempDir()
	folder.Write(t, src, map[string]string{"apps/root.yaml": "kind: Application\n"})
	dst := filepath.Join(t.TempDir(), "repo")
	sha, err := Write(Options{Src: src, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Write(Options{Src: src, Dst: dst})
	if err != nil || again != sha {
		t.Errorf("second snapshot of unchanged files = %s, %v; want the same commit %s", again, err, sha)
	}
	folder.Write(t, src, map[string]string{"apps/root.yaml": "kind: Application # changed\n"})
	changed, err := Write(Options{Src: src, Dst: dst})
	if err != nil || changed == sha {
		t.Errorf("snapshot of changed files = %s, %v; want a new commit", changed, err)
	}
}

// TestSnapshotAddsExtraFiles adds a folder from elsewhere under another
// name, replacing what the source holds at that path.
func TestSnapshotAddsExtraFiles(t *testing.T) {
	src, extra := t.TempDir(), t.TempDir()
	folder.Write(t, src, map[string]string{
		"charts/k/Chart.yaml":    "name: k\n",
		"charts/k/crds/old.yaml": "old\n",
	})
	folder.Write(t, extra, map[string]string{"karpenter-crds/a.yaml": "a\n", "karpenter-crds/b.yaml": "b\n", "one.txt": "1\n"})
	dst := filepath.Join(t.TempDir(), "repo")
	_, err := Write(Options{Src: src, Dst: dst, Extra: map[string]string{
		"charts/k/crds": filepath.Join(extra, "karpenter-crds"),
		"top.txt":       filepath.Join(extra, "one.txt"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := snapshotFiles(t, dst)
	want := map[string]string{
		"charts/k/Chart.yaml":  "name: k\n",
		"charts/k/crds/a.yaml": "a\n",
		"charts/k/crds/b.yaml": "b\n",
		"top.txt":              "1\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot files (-want +got):\n%s", diff)
	}
}

// snapshotFiles reads every file of a snapshot's HEAD: path -> content.
func snapshotFiles(t *testing.T, dst string) map[string]string {
	t.Helper()
	repos := source.NewRepos(source.ReposOptions{Mirrors: source.Mirrors{"https://example.com/r": dst}})
	sha, err := repos.Resolve(t.Context(), "https://example.com/r", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repos.Tree(t.Context(), "https://example.com/r", sha)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := tree.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
