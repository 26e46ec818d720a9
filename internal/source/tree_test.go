package source

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/testenv/folder"
)

func TestTreeFollowsSymlinksInsideOnly(t *testing.T) {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{
		"a/file.yaml":       "x: 1\n",
		"a/link.yaml":       "-> file.yaml",
		"b/dirlink":         "-> ../a",
		"escape/root":       "-> /",
		"escape/up":         "-> ../../outside",
		"loop/one":          "-> two",
		"loop/two":          "-> one",
		"chart/values.yaml": "-> ../a/file.yaml",
	})
	tree, err := ReadDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		name    string
		want    string
		wantErr string
	}{
		"plain file":                 {name: "a/file.yaml", want: "x: 1\n"},
		"file symlink":               {name: "a/link.yaml", want: "x: 1\n"},
		"through a folder symlink":   {name: "b/dirlink/file.yaml", want: "x: 1\n"},
		"symlink up inside the repo": {name: "chart/values.yaml", want: "x: 1\n"},
		"symlink to /":               {name: "escape/root/etc/passwd", wantErr: `path "escape/root/etc/passwd" goes through a symlink that points outside the repository (escape/root -> /)`},
		"symlink out of the repo":    {name: "escape/up", wantErr: `path "escape/up" goes through a symlink that points outside the repository (escape/up -> ../../outside)`},
		"symlink loop":               {name: "loop/one", wantErr: `path "loop/one" goes through too many symlinks`},
		"dot dot":                    {name: "../x", wantErr: "read ../x: invalid argument"},
		"missing":                    {name: "a/nope.yaml", wantErr: "open a/nope.yaml: file does not exist"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tree.ReadFile(tc.name)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreeIsAnFS(t *testing.T) {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{"a/b.yaml": "b", "c.json": "{}", ".git/HEAD": "ref"})
	tree, err := ReadDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "a/b.yaml", "c.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Stat(".git/HEAD"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .git folder is in the tree: %v", err)
	}
}

// expectError fails the test unless err matches want (a substring) and
// reports whether the case expected an error; with want empty, any error
// fails the test.
func expectError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
	return true
}
