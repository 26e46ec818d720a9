package source

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
)

// TarOptions tune WriteTar.
type TarOptions struct {
	// OmitEscapingSymlinks leaves out symlinks that point outside the
	// tree, for a copy unpacked on disk; by default they are kept as they
	// are, for a Tree read back with ReadTar, which refuses to follow them.
	OmitEscapingSymlinks bool
}

// WriteTar writes t as a tar.gz stream: folders, files (0755 when
// executable, else 0644) and symlinks with their targets as stored.
func WriteTar(ctx context.Context, t *Tree, w io.Writer, opts TarOptions) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := fs.WalkDir(t, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		return t.writeTarEntry(tw, p, opts)
	})
	if err != nil {
		return fmt.Errorf("pack repository: %w", err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func (t *Tree) writeTarEntry(tw *tar.Writer, p string, opts TarOptions) error {
	_, e, err := t.walk(p, false)
	if err != nil {
		return err
	}
	switch e.kind {
	case kindSymlink:
		if _, err := linkTarget(path.Dir(p), e.target); err != nil && opts.OmitEscapingSymlinks {
			return nil
		}
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: e.target, Mode: 0o777})
	case kindDir:
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755})
	default: // a regular file, below
	}
	data, err := t.read(e)
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if e.exec {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data))}); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

// ReadTar reads a tar.gz stream (as WriteTar writes one) into an in-memory
// Tree with revision rev: the same path checks as for an OCI artifact, at
// most max bytes of content.
func ReadTar(ctx context.Context, r io.Reader, rev string, max int64) (*Tree, error) {
	files, err := untarLayer(ctx, r, "tar+gzip", max)
	if err != nil {
		return nil, err
	}
	return memoryTree(rev, files), nil
}
