package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// snapshotBranch is the branch HEAD points at in a snapshot.
const snapshotBranch = "main"

// snapshotTime is the fixed commit time of snapshots: the same files give
// the same commit, so a rehearsal of an unchanged folder changes nothing.
var snapshotTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configure Write.
type Options struct {
	// Src is the folder to snapshot.
	Src string
	// Dst is the bare repository to (re)create.
	Dst string
	// Exclude lists absolute paths left out (the workspace, when inside Src).
	Exclude []string
	// Branches are created besides main, all at the snapshot commit.
	Branches []string
	// Extra adds files that are not in Src: a path in the snapshot
	// (slash-separated, its parent folder present in Src) to a file or
	// folder on disk, which replaces anything at that path.
	Extra map[string]string
}

// Write writes the files of a folder as one commit into a new bare Git
// repository, skipping .git folders, what .gitignore files exclude and
// opts.Exclude. It returns the commit SHA.
func Write(opts Options) (string, error) {
	if err := os.RemoveAll(opts.Dst); err != nil {
		return "", fmt.Errorf("remove old snapshot: %w", err)
	}
	repo, err := git.PlainInit(opts.Dst, true)
	if err != nil {
		return "", fmt.Errorf("create snapshot repository: %w", err)
	}
	w := &treeWriter{objects: repo.Storer, exclude: opts.Exclude, extra: opts.Extra}
	root, err := w.writeDir(opts.Src, nil, nil)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", opts.Src, err)
	}
	sig := object.Signature{Name: "wavecd up", Email: "up@wavecd.invalid", When: snapshotTime}
	commit := &object.Commit{Author: sig, Committer: sig, Message: "wavecd up snapshot of " + filepath.Base(opts.Src) + "\n", TreeHash: root}
	head, err := w.store(commit)
	if err != nil {
		return "", fmt.Errorf("write snapshot commit: %w", err)
	}
	for _, b := range append([]string{snapshotBranch}, opts.Branches...) {
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(b), head)); err != nil {
			return "", fmt.Errorf("create branch %s: %w", b, err)
		}
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(snapshotBranch))); err != nil {
		return "", fmt.Errorf("set HEAD: %w", err)
	}
	return head.String(), nil
}

// treeWriter writes a folder's files and trees as Git objects.
type treeWriter struct {
	objects storer.EncodedObjectStorer
	exclude []string
	extra   map[string]string
}

type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func (w *treeWriter) store(e encoder) (plumbing.Hash, error) {
	obj := w.objects.NewEncodedObject()
	if err := e.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.objects.SetEncodedObject(obj)
}

// writeDir writes dir (at path rel inside the snapshot) and returns its
// tree; patterns are the .gitignore rules of the folders above.
func (w *treeWriter) writeDir(dir string, rel []string, patterns []gitignore.Pattern) (plumbing.Hash, error) {
	patterns = append(slices.Clip(patterns), readIgnoreFile(dir, rel)...)
	matcher := gitignore.NewMatcher(patterns)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree := &object.Tree{}
	extra := w.extraIn(rel)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		child := append(append([]string{}, rel...), e.Name())
		if _, replaced := extra[e.Name()]; replaced || w.skip(path, e) || matcher.Match(child, e.IsDir()) {
			continue
		}
		entry, ok, err := w.writeEntry(path, child, e, patterns)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if ok {
			tree.Entries = append(tree.Entries, entry)
		}
	}
	for name, src := range extra {
		entry, ok, err := w.writeExtra(src, append(slices.Clip(rel), name))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if ok {
			tree.Entries = append(tree.Entries, entry)
		}
	}
	sort.Sort(object.TreeEntrySorter(tree.Entries))
	return w.store(tree)
}

// extraIn returns the extra files whose parent is the folder rel, by name.
func (w *treeWriter) extraIn(rel []string) map[string]string {
	out := map[string]string{}
	for target, src := range w.extra {
		parts := strings.Split(strings.Trim(target, "/"), "/")
		if slices.Equal(parts[:len(parts)-1], rel) {
			out[parts[len(parts)-1]] = src
		}
	}
	return out
}

// writeExtra writes the file or folder src at rel in the snapshot.
func (w *treeWriter) writeExtra(src string, rel []string) (object.TreeEntry, bool, error) {
	info, err := os.Stat(src)
	if err != nil {
		return object.TreeEntry{}, false, err
	}
	entry, ok, err := w.writeEntry(src, rel, fs.FileInfoToDirEntry(info), nil)
	entry.Name = rel[len(rel)-1]
	return entry, ok, err
}

func (w *treeWriter) skip(path string, e fs.DirEntry) bool {
	if e.IsDir() && e.Name() == ".git" {
		return true
	}
	for _, x := range w.exclude {
		if path == x {
			return true
		}
	}
	return false
}

// writeEntry writes one directory entry; irregular files and empty
// folders are left out, as Git does.
func (w *treeWriter) writeEntry(path string, rel []string, e fs.DirEntry, patterns []gitignore.Pattern) (object.TreeEntry, bool, error) {
	entry := object.TreeEntry{Name: e.Name()}
	var data []byte
	var err error
	switch {
	case e.IsDir():
		entry.Mode = filemode.Dir
		entry.Hash, err = w.writeDir(path, rel, patterns)
		if err == nil && entry.Hash == emptyTree {
			return entry, false, nil
		}
		return entry, err == nil, err
	case e.Type()&fs.ModeSymlink != 0:
		entry.Mode = filemode.Symlink
		var target string
		target, err = os.Readlink(path)
		data = []byte(filepath.ToSlash(target))
	case e.Type().IsRegular():
		entry.Mode = filemode.Regular
		if info, ierr := e.Info(); ierr == nil && info.Mode()&0o111 != 0 {
			entry.Mode = filemode.Executable
		}
		data, err = os.ReadFile(path)
	default:
		return entry, false, nil
	}
	if err != nil {
		return entry, false, err
	}
	entry.Hash, err = w.store(blob(data))
	return entry, err == nil, err
}

// emptyTree is the hash of a tree with no entries.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// blob encodes file contents as a Git blob.
type blob []byte

func (b blob) Encode(o plumbing.EncodedObject) error {
	o.SetType(plumbing.BlobObject)
	o.SetSize(int64(len(b)))
	wr, err := o.Writer()
	if err != nil {
		return err
	}
	if _, err := wr.Write(b); err != nil {
		wr.Close()
		return err
	}
	return wr.Close()
}

// readIgnoreFile parses dir's .gitignore, scoped to rel.
func readIgnoreFile(dir string, rel []string) []gitignore.Pattern {
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, rel))
	}
	return ps
}
