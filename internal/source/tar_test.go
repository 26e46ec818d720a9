package source

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/wavecd/wavecd/internal/testenv/folder"
)

func TestTarRoundTrip(t *testing.T) {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{
		"app/cm.yaml": "kind: ConfigMap\n", "app/link.yaml": "-> cm.yaml", "app/passwd": "-> /etc/passwd", "up": "-> ..",
	})
	if err := os.WriteFile(filepath.Join(dir, "app", "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := ReadDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]TarOptions{"kept": {}, "omitted": {OmitEscapingSymlinks: true}} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTar(t.Context(), tree, &buf, opts); err != nil {
				t.Fatal(err)
			}
			back, err := ReadTar(t.Context(), &buf, "rev", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if data, err := back.ReadFile("app/link.yaml"); err != nil || string(data) != "kind: ConfigMap\n" {
				t.Errorf("symlink inside: %q %v", data, err)
			}
			if info, err := back.Stat("app/run.sh"); err != nil || info.Mode()&0o111 == 0 {
				t.Errorf("executable bit lost: %v %v", info, err)
			}
			_, err = back.ReadFile("app/passwd")
			var pe *PathError
			switch {
			case opts.OmitEscapingSymlinks && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("escaping symlink: %v, want it left out", err)
			case !opts.OmitEscapingSymlinks && !errors.As(err, &pe):
				t.Errorf("escaping symlink: %v, want a PathError", err)
			}
		})
	}
	var buf bytes.Buffer
	if err := WriteTar(t.Context(), tree, &buf, TarOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTar(t.Context(), &buf, "", 5); err == nil {
		t.Error("a tree larger than the cap was read")
	}
}
