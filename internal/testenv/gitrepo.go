package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitRepo is a local Git repository a test commits to. The controller
// reads it in place: an Application's repoURL is its Dir.
type GitRepo struct {
	t   testing.TB
	Dir string
}

// NewGitRepo creates a repository on branch main holding files.
func NewGitRepo(t testing.TB, files map[string]string) *GitRepo {
	t.Helper()
	g := &GitRepo{t: t, Dir: t.TempDir()}
	g.Git("init", "-q", "-b", "main")
	g.Commit(files, "initial")
	return g
}

// Git runs git in the repository, with a fixed identity and no system or
// user configuration, and returns its trimmed output.
func (g *GitRepo) Git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=test@example.test", "-c", "user.name=test"}, args...)...)
	cmd.Dir = g.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes files (slash paths; an empty content removes the file),
// commits them and returns the new revision.
func (g *GitRepo) Commit(files map[string]string, msg string) string {
	g.t.Helper()
	for name, content := range files {
		p := filepath.Join(g.Dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(p); err != nil {
				g.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.Git("add", "-A")
	g.Git("commit", "-q", "-m", msg)
	return g.Git("rev-parse", "HEAD")
}
