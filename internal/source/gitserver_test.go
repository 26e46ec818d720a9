package source

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wavecd/wavecd/internal/testenv/folder"
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

// gitServer serves bare repositories under root with git's own
// http-backend, on 127.0.0.1, optionally behind basic auth. It counts
// fetches (upload-pack POSTs) and ref listings.
type gitServer struct {
	URL     string
	fetches atomic.Int32
	lists   atomic.Int32
}

func serveGit(t *testing.T, root, user, pass string) *gitServer {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git CLI is needed to serve test repositories: %v", err)
	}
	backend := &cgi.Handler{
		Path: gitPath, Args: []string{"http-backend"},
		// Pushes are served too (http.receivepack), behind the same
		// basic auth as fetches.
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true"},
	}
	s := &gitServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			s.fetches.Add(1)
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			s.lists.Add(1)
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}
