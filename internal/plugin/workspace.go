package plugin

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/wavecd/wavecd/internal/source"
)

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
