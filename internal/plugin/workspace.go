package plugin

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/wavecd/wavecd/internal/source"
)

// WriteTar writes tree as a tar.gz stream: folders, files (0755 when
// executable, else 0644) and the symlinks that resolve inside the tree;
// symlinks that point outside it are left out.
func WriteTar(ctx context.Context, tree *source.Tree, w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		return writeEntry(tree, tw, p, d)
	})
	if err != nil {
		return fmt.Errorf("pack repository: %w", err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeEntry(tree *source.Tree, tw *tar.Writer, p string, d fs.DirEntry) error {
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		target, err := tree.Readlink(p)
		var pe *source.PathError
		if errors.As(err, &pe) {
			return nil
		}
		if err != nil {
			return err
		}
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: target, Mode: 0o777})
	case d.IsDir():
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755})
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	data, err := tree.ReadFile(p)
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data))}); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

// unpack extracts a tar.gz stream into the empty folder dir, through an
// os.Root so no entry can write outside it, not even through a symlink.
// Names that leave dir, symlinks whose target leaves it and more than
// maxBytes of content are refused. Without preserveMode files are 0644
// and folders 0755, as Argo CD's cmp-server makes them.
func unpack(r io.Reader, dir string, preserveMode bool, maxBytes int64) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("unpack repository: %w", err)
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("unpack repository: %w", err)
	}
	tr := tar.NewReader(gz)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack repository: %w", err)
		}
		total += h.Size
		if total > maxBytes {
			return fmt.Errorf("unpack repository: more than %d bytes", maxBytes)
		}
		if err := unpackEntry(root, tr, h, preserveMode); err != nil {
			return fmt.Errorf("unpack repository: %s: %w", h.Name, err)
		}
	}
}

func unpackEntry(root *os.Root, tr *tar.Reader, h *tar.Header, preserveMode bool) error {
	name, err := source.Join(".", h.Name, source.JoinOptions{})
	if err != nil {
		return err
	}
	if name == "." {
		return nil
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, 0o755)
	case tar.TypeSymlink:
		if _, err := source.Join(path.Dir(name), h.Linkname, source.JoinOptions{}); err != nil {
			return err
		}
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		return root.Symlink(h.Linkname, name)
	case tar.TypeReg:
		mode := os.FileMode(0o644)
		if preserveMode {
			mode = os.FileMode(h.Mode) & 0o777
		}
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(tr, h.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("unsupported entry type %q", h.Typeflag)
}
