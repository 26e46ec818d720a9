package source

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadDir returns a Tree of the folder dir as it is now, for sources that
// are plain folders (a local path or an offline mirror that is not a Git
// repository). The .git folder is left out. File contents are read when
// first asked for; the tree's revision is "".
func ReadDir(ctx context.Context, dir string) (*Tree, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", dir, err)
	}
	files := map[string]*entry{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		e, err := diskEntry(p, d)
		if err != nil || e == nil {
			return err
		}
		files[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", dir, err)
	}
	return newTree("", files, readDisk), nil
}

// diskEntry describes one file found on disk; irregular files are skipped.
func diskEntry(p string, d fs.DirEntry) (*entry, error) {
	switch {
	case d.IsDir():
		return &entry{kind: kindDir}, nil
	case d.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		return &entry{kind: kindSymlink, target: filepath.ToSlash(target)}, nil
	case d.Type().IsRegular():
		info, err := d.Info()
		if err != nil {
			return nil, err
		}
		return &entry{kind: kindFile, size: info.Size(), key: p, exec: info.Mode()&0o111 != 0}, nil
	}
	return nil, nil
}

// readDisk reads a regular file without following a symlink that may have
// replaced it since the folder was indexed.
func readDisk(e *entry) ([]byte, error) {
	f, err := os.OpenFile(e.key, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
