package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
)

// kind says how a repository is served.
type kind string

const (
	kindSnapshot kind = "snapshot" // a folder committed into Dst
	kindInPlace  kind = "git"      // a Git repository read as committed
	kindClone    kind = "clone"    // a remote repository cloned into Dst
)

// ServeOptions say which repository to serve and where.
type ServeOptions struct {
	// Repo is a folder, a Git repository or a repository URL.
	Repo string
	// Root is the root manifest's path inside Repo (or an absolute path).
	Root string
	// Namespace is the controller's namespace, the root manifest's.
	Namespace string
	// Dst is where a snapshot or a clone is written.
	Dst string
	// Exclude lists absolute paths a snapshot leaves out (the workspace,
	// when inside Repo).
	Exclude []string
}

// Served is the repository a rehearsal serves to the controller and the
// root manifest read from it.
type Served struct {
	kind kind
	// Path is the local Git repository the mirrors point at.
	Path     string
	Revision string
	Root     []*unstructured.Unstructured
	// URL is Repo when it is a URL: mirrored too.
	URL string
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

// Serve prepares o.Repo and reads the root manifest from it: a URL is
// cloned into o.Dst, a Git repository is read in place (its committed
// files), a folder is written into o.Dst as a snapshot offering the
// branches the root Applications target.
func Serve(ctx context.Context, o ServeOptions) (Served, error) {
	if isRemoteURL(o.Repo) {
		return cloneRepo(ctx, o)
	}
	dir, err := filepath.Abs(strings.TrimPrefix(o.Repo, "file://"))
	if err != nil {
		return Served{}, fmt.Errorf("resolve --repo: %w", err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return Served{}, fmt.Errorf("--repo %s: not a folder or a repository URL", o.Repo)
	}
	root, err := manifest.ReadRoot(underRepo(dir, o.Root), o.Namespace)
	if err != nil {
		return Served{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		rev, err := headRevision(dir)
		if err != nil {
			return Served{}, err
		}
		return Served{kind: kindInPlace, Path: dir, Revision: rev, Root: root}, nil
	}
	rev, err := Write(Options{Src: dir, Dst: o.Dst, Exclude: o.Exclude, Branches: manifest.Branches(root)})
	if err != nil {
		return Served{}, err
	}
	return Served{kind: kindSnapshot, Path: o.Dst, Revision: rev, Root: root}, nil
}

// underRepo resolves the root manifest's path inside the repository.
func underRepo(dir, rootPath string) string {
	if filepath.IsAbs(rootPath) {
		return rootPath
	}
	return filepath.Join(dir, rootPath)
}

// cloneRepo clones the URL o.Repo into o.Dst and reads the root from it.
func cloneRepo(ctx context.Context, o ServeOptions) (Served, error) {
	if err := os.RemoveAll(o.Dst); err != nil {
		return Served{}, fmt.Errorf("remove old clone: %w", err)
	}
	if _, err := git.PlainCloneContext(ctx, o.Dst, false, &git.CloneOptions{URL: o.Repo}); err != nil {
		return Served{}, fmt.Errorf("clone %s: %w", o.Repo, err)
	}
	root, err := manifest.ReadRoot(underRepo(o.Dst, o.Root), o.Namespace)
	if err != nil {
		return Served{}, err
	}
	rev, err := headRevision(o.Dst)
	if err != nil {
		return Served{}, err
	}
	return Served{kind: kindClone, Path: o.Dst, Revision: rev, Root: root, URL: o.Repo}, nil
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

// Describe says in a few words what is served, for the timeline.
func (r Served) Describe() string {
	short := r.Revision
	if len(short) > 7 {
		short = short[:7]
	}
	switch r.kind {
	case kindSnapshot:
		return fmt.Sprintf("snapshot %s of the folder", short)
	case kindClone:
		return fmt.Sprintf("clone of %s at %s", r.URL, short)
	default: // a repository used in place, below
	}
	return fmt.Sprintf("Git repository at %s (committed files only)", short)
}
