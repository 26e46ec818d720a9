package source

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/testenv/folder"
	"github.com/wavecd/wavecd/internal/testenv/gitserver"
)

// git runs the git CLI in dir with a fixed identity and returns its output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitFiles writes files into the work tree dir and commits them.
func commitFiles(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	folder.Write(t, dir, files)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", msg)
	return runGit(t, dir, "rev-parse", "HEAD")
}

// testRepo is a repository with known commits on main, a dev branch, an
// annotated tag v1.0.0 and a lightweight tag light.
type testRepo struct {
	work, bare                    string
	first, second, dev, annotated string
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	root := t.TempDir()
	r := &testRepo{work: filepath.Join(root, "work"), bare: filepath.Join(root, "srv", "repo.git")}
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, r.work, "init", "-q", "-b", "main")
	r.first = commitFiles(t, r.work, "first", map[string]string{"app/cm.yaml": "rev: first\n"})
	runGit(t, r.work, "tag", "-a", "v1.0.0", "-m", "release")
	r.annotated = r.first
	r.second = commitFiles(t, r.work, "second", map[string]string{"app/cm.yaml": "rev: second\n"})
	runGit(t, r.work, "tag", "light")
	runGit(t, r.work, "checkout", "-q", "-b", "dev")
	r.dev = commitFiles(t, r.work, "dev", map[string]string{"app/cm.yaml": "rev: dev\n"})
	runGit(t, r.work, "checkout", "-q", "main")
	runGit(t, root, "clone", "-q", "--bare", r.work, r.bare)
	return r
}

// serveGit serves the bare repositories under root (see gitserver).
func serveGit(t *testing.T, root, user, pass string) *gitserver.Server {
	t.Helper()
	return gitserver.Serve(t, root, user, pass)
}
