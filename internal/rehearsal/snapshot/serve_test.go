package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// serveOptions are the options wavecd up serves repo with, from the
// workspace ws.
func serveOptions(repo, ws string) ServeOptions {
	return ServeOptions{Repo: repo, Root: "apps/root.yaml", Namespace: "argocd", Dst: filepath.Join(ws, "repo"), Exclude: []string{ws}}
}

func TestServeRepo(t *testing.T) {
	// The root manifest of the manifest package's tests: two apps.
	twoRoots, err := os.ReadFile("../manifest/testdata/two-roots.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	folder.Write(t, src, map[string]string{"apps/root.yaml": string(twoRoots)})
	ws := filepath.Join(t.TempDir(), ".wavecd")
	snap, err := Serve(t.Context(), serveOptions(src, ws))
	if err != nil {
		t.Fatal(err)
	}
	if snap.kind != kindSnapshot || snap.Path != filepath.Join(ws, "repo") || len(manifest.Apps(snap.Root)) != 2 {
		t.Fatalf("a folder is served as %s at %s with %d apps", snap.kind, snap.Path, len(manifest.Apps(snap.Root)))
	}
	// The snapshot is a Git repository: a URL naming it is cloned, and the
	// clone, a Git working tree, is served in place.
	clone, err := cloneRepo(t.Context(), serveOptions(snap.Path, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if clone.kind != kindClone || clone.Revision != snap.Revision || clone.URL != snap.Path {
		t.Errorf("clone = %s at %s from %s; want the snapshot's commit %s", clone.kind, clone.Revision, clone.URL, snap.Revision)
	}
	inPlace, err := Serve(t.Context(), serveOptions(clone.Path, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if inPlace.kind != kindInPlace || inPlace.Path != clone.Path || inPlace.Revision != snap.Revision {
		t.Errorf("a Git working tree is served as %s at %s, commit %s", inPlace.kind, inPlace.Path, inPlace.Revision)
	}
}

func TestIsRemoteURL(t *testing.T) {
	for in, want := range map[string]bool{
		"https://github.com/org/repo.git": true,
		"git@github.com:org/repo.git":     true,
		"ssh://git@host/repo":             true,
		"file:///tmp/repo":                false,
		"examples/healthcheck-poc":        false,
		"/abs/path":                       false,
		".":                               false,
	} {
		if got := isRemoteURL(in); got != want {
			t.Errorf("isRemoteURL(%q) = %v, want %v", in, got, want)
		}
	}
}
