package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// writeTree stores the tree of base (nil: empty) with files (slash paths
// to contents) written over it and returns its hash. A path must stay in
// the tree: no empty, "." or ".." component, nothing under .git, and no
// component that base holds as a file or symlink rather than a folder.
func writeTree(s storer.EncodedObjectStorer, base *object.Tree, files map[string][]byte) (plumbing.Hash, error) {
	for path := range files {
		if err := checkTreePath(path); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return writeSubtree(s, base, files, "")
}

func checkTreePath(path string) error {
	for part := range strings.SplitSeq(path, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return fmt.Errorf("path %q: %q is not a file or folder name a commit may hold", path, part)
		}
	}
	return nil
}

// writeSubtree writes files (paths relative to this tree, at prefix).
func writeSubtree(s storer.EncodedObjectStorer, base *object.Tree, files map[string][]byte, prefix string) (plumbing.Hash, error) {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	blobs, dirs := map[string][]byte{}, map[string]map[string][]byte{}
	for path, content := range files {
		name, rest, nested := strings.Cut(path, "/")
		if !nested {
			blobs[name] = content
			continue
		}
		if dirs[name] == nil {
			dirs[name] = map[string][]byte{}
		}
		dirs[name][rest] = content
	}
	for name, content := range blobs {
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			return plumbing.ZeroHash, fmt.Errorf("%s%s is a folder in the branch, not a file", prefix, name)
		}
		h, err := storeBlob(s, content)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
	}
	for name, sub := range dirs {
		var subBase *object.Tree
		if e, ok := entries[name]; ok {
			if e.Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s%s is a %s in the branch, not a folder", prefix, name, modeName(e.Mode))
			}
			t, err := object.GetTree(s, e.Hash)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("read %s%s: %w", prefix, name, err)
			}
			subBase = t
		}
		h, err := writeSubtree(s, subBase, sub, prefix+name+"/")
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	return storeTree(s, entries)
}

func modeName(m filemode.FileMode) string {
	if m == filemode.Symlink {
		return "symlink"
	}
	if m == filemode.Submodule {
		return "submodule"
	}
	return "file"
}

func storeBlob(s storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// storeTree stores entries in Git's order: by name, a folder's name
// compared as if it ended in "/".
func storeTree(s storer.EncodedObjectStorer, entries map[string]object.TreeEntry) (plumbing.Hash, error) {
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(list, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	obj := s.NewEncodedObject()
	if err := (&object.Tree{Entries: list}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}
