package e2e

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a local Git repository the controller reads in place: an
// Application's repoURL is its path.
type gitRepo struct {
	t   *testing.T
	dir string
}

// newGitRepo creates a repository on branch main holding files.
func newGitRepo(t *testing.T, files map[string]string) *gitRepo {
	t.Helper()
	g := &gitRepo{t: t, dir: t.TempDir()}
	g.git("init", "-q", "-b", "main")
	g.commit(files, "initial")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=e2e@example.test", "-c", "user.name=e2e"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files and commits them; it returns the new revision.
func (g *gitRepo) commit(files map[string]string, msg string) string {
	g.t.Helper()
	for name, content := range files {
		p := filepath.Join(g.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

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
