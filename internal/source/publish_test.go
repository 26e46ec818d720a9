package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv"
)

const notesRef = "refs/notes/hydrator.metadata"

func openBranch(t *testing.T, repos *source.Repos, dir, branch, from string) *source.Branch {
	t.Helper()
	b, err := repos.OpenBranch(t.Context(), dir, branch, source.PublishOptions{
		From: from, Notes: notesRef, Author: object.Signature{Name: "Argo CD", Email: "argo-cd@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPublishNewBranch writes to a branch that does not exist, starting
// from a sync branch that does not exist either: the sync branch gets its
// empty initial commit, the new branch the files, and the note sits on
// the new commit; git itself reads all three.
func TestPublishNewBranch(t *testing.T) {
	repo := testenv.NewGitRepo(t, map[string]string{"apps/cm.yaml": "a: 1\n"})
	repos := source.NewRepos(source.ReposOptions{})
	b := openBranch(t, repos, repo.Dir, "environments/dev-next", "environments/dev")
	if got := repo.Git("log", "--format=%s%n%an <%ae>", "environments/dev"); got != "Initial commit for environments/dev\nArgo CD <argo-cd@example.com>" {
		t.Errorf("environments/dev: %q", got)
	}
	if _, ok, err := b.Read("dev/manifest.yaml"); ok || err != nil {
		t.Errorf("read from the empty branch: %v, %v", ok, err)
	}
	sha, err := b.Commit(t.Context(), map[string][]byte{"dev/manifest.yaml": []byte("kind: ConfigMap\n"), "hydrator.metadata": []byte("{}\n")}, "abc1234: change")
	if err != nil {
		t.Fatal(err)
	}
	if got := repo.Git("rev-parse", "environments/dev-next"); got != sha {
		t.Errorf("environments/dev-next at %s, want %s", got, sha)
	}
	if got := repo.Git("show", "environments/dev-next:dev/manifest.yaml"); got != "kind: ConfigMap" {
		t.Errorf("manifest.yaml: %q", got)
	}
	if got := repo.Git("rev-parse", "environments/dev-next~1"); got != repo.Git("rev-parse", "environments/dev") {
		t.Errorf("the new branch does not start at the sync branch")
	}
	if err := b.Note(t.Context(), sha, []byte(`{"drySha":"abc"}`)); err != nil {
		t.Fatal(err)
	}
	if got := repo.Git("notes", "--ref", "hydrator.metadata", "show", sha); got != `{"drySha":"abc"}` {
		t.Errorf("note: %q", got)
	}
	again := openBranch(t, repos, repo.Dir, "environments/dev-next", "environments/dev")
	if note, ok, err := again.ReadNote(sha); !ok || err != nil || string(note) != `{"drySha":"abc"}` {
		t.Errorf("note read back: %q %v %v", note, ok, err)
	}
	if data, ok, _ := again.Read("dev/manifest.yaml"); !ok || string(data) != "kind: ConfigMap\n" {
		t.Errorf("manifest read back: %q", data)
	}
}

// TestPublishRefusals: a branch that moved since it was read is not
// overwritten, and paths that would leave the tree or pass through a
// symlink the branch holds are refused.
func TestPublishRefusals(t *testing.T) {
	repo := testenv.NewGitRepo(t, map[string]string{"apps/cm.yaml": "a: 1\n"})
	repo.Git("checkout", "-q", "-b", "hydrated")
	if err := os.Symlink("/etc", filepath.Join(repo.Dir, "env")); err != nil {
		t.Fatal(err)
	}
	repo.Commit(map[string]string{"apps/x.yaml": "b: 1\n"}, "a symlink")
	repo.Git("checkout", "-q", "main")
	repos := source.NewRepos(source.ReposOptions{})

	first := openBranch(t, repos, repo.Dir, "hydrated", "")
	second := openBranch(t, repos, repo.Dir, "hydrated", "")
	if _, err := first.Commit(t.Context(), map[string][]byte{"dev/manifest.yaml": []byte("a\n")}, "first"); err != nil {
		t.Fatal(err)
	}
	_, err := second.Commit(t.Context(), map[string][]byte{"dev/manifest.yaml": []byte("b\n")}, "second")
	if !errors.Is(err, source.ErrBranchMoved) {
		t.Errorf("commit over a moved branch: %v, want ErrBranchMoved", err)
	}
	if got := repo.Git("show", "hydrated:dev/manifest.yaml"); got != "a" {
		t.Errorf("the moved branch was overwritten: %q", got)
	}
	for path, want := range map[string]string{
		"env/manifest.yaml":  "env is a symlink in the branch, not a folder",
		"../x/manifest.yaml": `".." is not a file or folder name`,
		"a//b":               `"" is not a file or folder name`,
		".git/config":        `".git" is not a file or folder name`,
		"apps":               "apps is a folder in the branch, not a file",
	} {
		b := openBranch(t, repos, repo.Dir, "hydrated", "")
		_, err := b.Commit(t.Context(), map[string][]byte{path: []byte("x\n")}, "refused")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("write %s: %v, want %q", path, err, want)
		}
	}
	if _, err := repos.OpenBranch(t.Context(), t.TempDir(), "main", source.PublishOptions{}); err == nil || !strings.Contains(err.Error(), "not a Git repository") {
		t.Errorf("open a plain folder: %v", err)
	}
}
