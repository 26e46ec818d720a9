package source

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// maxSymlinkHops bounds symlink chains, like the kernel's ELOOP limit.
const maxSymlinkHops = 40

type entryKind uint8

const (
	kindDir entryKind = iota
	kindFile
	kindSymlink
)

// entry is one path in a tree.
type entry struct {
	kind     entryKind
	exec     bool     // an executable file
	size     int64    // file size when known at index time
	target   string   // symlink target as stored
	key      string   // how the reader finds the content (blob hash or disk path)
	children []string // sorted child names of a directory
}

// contentReader returns the bytes of a file entry.
type contentReader func(e *entry) ([]byte, error)

// Tree is an immutable, read-only view of one revision of a repository (or
// of a local folder at the time it was read). It implements fs.FS,
// fs.ReadFileFS, fs.ReadDirFS and fs.StatFS with paths relative to the
// repository root. Symlinks are followed only while they stay inside the
// tree; anything else is a *PathError.
type Tree struct {
	revision string
	entries  map[string]*entry
	read     contentReader
}

// Revision is the commit SHA the tree was read from, or "" for a local
// folder that is not a Git commit.
func (t *Tree) Revision() string { return t.revision }

// newTree builds a tree from a flat list of entries keyed by slash path.
// Parent directories are created as needed.
func newTree(revision string, files map[string]*entry, read contentReader) *Tree {
	t := &Tree{revision: revision, entries: map[string]*entry{".": {kind: kindDir}}, read: read}
	for p, e := range files {
		if old, ok := t.entries[p]; ok && old.kind == kindDir && e.kind == kindDir {
			continue // already created as the parent of an earlier path
		}
		t.entries[p] = e
		t.addParents(p)
	}
	for _, e := range t.entries {
		if e.kind == kindDir {
			slices.Sort(e.children)
		}
	}
	return t
}

func (t *Tree) addParents(p string) {
	for p != "." {
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if dir == "" {
			dir = "."
		}
		parent, ok := t.entries[dir]
		if !ok {
			parent = &entry{kind: kindDir}
			t.entries[dir] = parent
		}
		if slices.Contains(parent.children, name) {
			return
		}
		parent.children = append(parent.children, name)
		p = dir
	}
}

// Resolve follows every symlink in name and returns the canonical path of
// what it points to, relative to the root. A missing path resolves to
// fs.ErrNotExist wrapped in *fs.PathError.
func (t *Tree) Resolve(name string) (string, error) {
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) {
		return "", &PathError{Path: name, Reason: ReasonLeavesRoot}
	}
	resolved, _, err := t.walk(name, true)
	return resolved, err
}

// walk resolves name component by component. With followLast false the last
// component is not followed if it is a symlink (Lstat semantics).
func (t *Tree) walk(name string, followLast bool) (string, *entry, error) {
	parts := strings.Split(name, "/")
	cur := "."
	hops := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		if part == "." || part == "" {
			continue
		}
		next := path.Join(cur, part)
		e, ok := t.entries[next]
		if !ok {
			return "", nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		last := i == len(parts)-1
		if e.kind != kindSymlink || (last && !followLast) {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", nil, &PathError{Path: name, Reason: ReasonSymlinkLoop}
		}
		target, err := linkTarget(cur, e.target)
		if err != nil {
			return "", nil, &PathError{Path: name, Reason: ReasonSymlinkEscape + " (" + next + " -> " + e.target + ")"}
		}
		rest := append(strings.Split(target, "/"), parts[i+1:]...)
		parts, i, cur = rest, -1, "."
	}
	return cur, t.entries[cur], nil
}

// linkTarget resolves a symlink target relative to the directory holding it.
func linkTarget(dir, target string) (string, error) {
	if path.IsAbs(target) {
		return "", errors.New("absolute symlink")
	}
	joined := path.Join(dir, target)
	if escapes(joined) {
		return "", errors.New("symlink escapes")
	}
	return joined, nil
}

// Open opens name for reading, following symlinks inside the tree.
func (t *Tree) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	resolved, e, err := t.walk(name, true)
	if err != nil {
		return nil, err
	}
	info := t.info(path.Base(name), e)
	if e.kind == kindDir {
		entries, err := t.dirEntries(resolved, e)
		if err != nil {
			return nil, err
		}
		return &openDir{info: info, entries: entries}, nil
	}
	data, err := t.read(e)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	info.size = int64(len(data))
	return &openFile{info: info, r: bytes.NewReader(data)}, nil
}

// ReadFile returns the contents of name, following symlinks inside the tree.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	_, e, err := t.walk(name, true)
	if err != nil {
		return nil, err
	}
	if e.kind == kindDir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	data, err := t.read(e)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// ReadDir lists the directory name (following symlinks to reach it). Entries
// that are symlinks are reported as such, like os.ReadDir.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	resolved, e, err := t.walk(name, true)
	if err != nil {
		return nil, err
	}
	if e.kind != kindDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return t.dirEntries(resolved, e)
}

func (t *Tree) dirEntries(dir string, e *entry) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(e.children))
	for _, c := range e.children {
		out = append(out, fs.FileInfoToDirEntry(t.info(c, t.entries[path.Join(dir, c)])))
	}
	return out, nil
}

// Stat describes name, following symlinks inside the tree.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	return t.stat(name, true)
}

// Lstat describes name without following a final symlink.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	return t.stat(name, false)
}

func (t *Tree) stat(name string, follow bool) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	_, e, err := t.walk(name, follow)
	if err != nil {
		return nil, err
	}
	return t.info(path.Base(name), e), nil
}

func (t *Tree) info(name string, e *entry) *fileInfo {
	fi := &fileInfo{name: name, size: e.size}
	switch e.kind {
	case kindDir:
		fi.mode = fs.ModeDir | 0o555
	case kindSymlink:
		fi.mode = fs.ModeSymlink | 0o444
	case kindFile:
		fi.mode = 0o444
		if e.exec {
			fi.mode = 0o555
		}
	}
	return fi
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Time{} }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return nil }

type openFile struct {
	info *fileInfo
	r    *bytes.Reader
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *openFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *openFile) Close() error               { return nil }

type openDir struct {
	info    *fileInfo
	entries []fs.DirEntry
	offset  int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *openDir) Close() error { return nil }

func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.offset += n
	return rest[:n], nil
}
