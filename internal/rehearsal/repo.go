package rehearsal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// repoKind says how a repository is served.
type repoKind string

const (
	repoSnapshot repoKind = "snapshot" // a folder committed into the workspace
	repoInPlace  repoKind = "git"      // a Git repository read as committed
	repoClone    repoKind = "clone"    // a remote repository cloned into the workspace
)

// servedRepo is the repository a rehearsal serves to the controller and
// the root manifest read from it.
type servedRepo struct {
	kind repoKind
	// path is the local Git repository the mirrors point at.
	path     string
	revision string
	root     []*unstructured.Unstructured
	// url is --repo when it is a URL: mirrored too.
	url string
}

// isRemoteURL reports a URL go-git fetches over the network (not a path or
// a file:// URL).
func isRemoteURL(s string) bool {
	if strings.HasPrefix(s, "file://") {
		return false
	}
	if strings.Contains(s, "://") {
		return true
	}
	at, colon := strings.Index(s, "@"), strings.Index(s, ":")
	return at > 0 && colon > at && !strings.Contains(s[:colon], "/")
}

// serveRepo prepares repo (a folder, a Git repository or a URL) and reads
// the root manifest from it.
func serveRepo(ctx context.Context, repo, rootPath, namespace string, ws Workspace) (servedRepo, error) {
	if isRemoteURL(repo) {
		return cloneRepo(ctx, repo, rootPath, namespace, ws)
	}
	dir, err := filepath.Abs(strings.TrimPrefix(repo, "file://"))
	if err != nil {
		return servedRepo{}, fmt.Errorf("resolve --repo: %w", err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return servedRepo{}, fmt.Errorf("--repo %s: not a folder or a repository URL", repo)
	}
	root, err := readRoot(underRepo(dir, rootPath), namespace)
	if err != nil {
		return servedRepo{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		rev, err := headRevision(dir)
		if err != nil {
			return servedRepo{}, err
		}
		return servedRepo{kind: repoInPlace, path: dir, revision: rev, root: root}, nil
	}
	rev, err := Snapshot(SnapshotOptions{Src: dir, Dst: ws.Repo(), Exclude: []string{ws.Dir}, Branches: rootBranches(root)})
	if err != nil {
		return servedRepo{}, err
	}
	return servedRepo{kind: repoSnapshot, path: ws.Repo(), revision: rev, root: root}, nil
}

// underRepo resolves the root manifest's path inside the repository.
func underRepo(dir, rootPath string) string {
	if filepath.IsAbs(rootPath) {
		return rootPath
	}
	return filepath.Join(dir, rootPath)
}

func cloneRepo(ctx context.Context, url, rootPath, namespace string, ws Workspace) (servedRepo, error) {
	if err := os.RemoveAll(ws.Repo()); err != nil {
		return servedRepo{}, fmt.Errorf("remove old clone: %w", err)
	}
	if _, err := git.PlainCloneContext(ctx, ws.Repo(), false, &git.CloneOptions{URL: url}); err != nil {
		return servedRepo{}, fmt.Errorf("clone %s: %w", url, err)
	}
	root, err := readRoot(underRepo(ws.Repo(), rootPath), namespace)
	if err != nil {
		return servedRepo{}, err
	}
	rev, err := headRevision(ws.Repo())
	if err != nil {
		return servedRepo{}, err
	}
	return servedRepo{kind: repoClone, path: ws.Repo(), revision: rev, root: root, url: url}, nil
}

func headRevision(dir string) (string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return "", fmt.Errorf("open Git repository %s: %w", dir, err)
	}
	head, err := repo.Head()
	if err != nil {
		return "", fmt.Errorf("read HEAD of %s: %w", dir, err)
	}
	return head.Hash().String(), nil
}

// describe says in a few words what is served, for the timeline.
func (r servedRepo) describe() string {
	short := r.revision
	if len(short) > 7 {
		short = short[:7]
	}
	switch r.kind {
	case repoSnapshot:
		return fmt.Sprintf("snapshot %s of the folder", short)
	case repoClone:
		return fmt.Sprintf("clone of %s at %s", r.url, short)
	}
	return fmt.Sprintf("Git repository at %s (committed files only)", short)
}
