package localcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// The kubeconfig lands whole, readable by its owner only, with nothing
// left aside; an earlier one is replaced.
func TestCopyKubeconfig(t *testing.T) {
	c := Cluster{Dir: t.TempDir()}
	want := "apiVersion: v1\nkind: Config\n"
	if err := os.WriteFile(filepath.Join(c.Dir, "kubeconfig"), []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	dst := filepath.Join(ws, "kubeconfig")
	if err := os.WriteFile(dst, []byte("an earlier cluster's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyKubeconfig(dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != want {
		t.Fatalf("kubeconfig = %q, %v; want %q", got, err, want)
	}
	if fi, err := os.Stat(dst); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 1 {
		t.Errorf("workspace holds %d files, want the kubeconfig alone", len(entries))
	}
	if err := (Cluster{Dir: t.TempDir()}).CopyKubeconfig(dst); err == nil {
		t.Error("a cluster without a kubeconfig copied one")
	}
}
