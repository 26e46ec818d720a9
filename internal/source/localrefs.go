package source

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// refsStamp summarizes the state of a local repository's refs: HEAD,
// packed-refs and every file and folder under refs/, by inode, size and
// modification time. Git rewrites a ref by renaming a new file over it, so
// any ref change changes the stamp. ok is false when the repository's
// layout is not one this can read (a linked worktree); the caller then
// reads the refs every time.
func refsStamp(path string) (stamp string, ok bool) {
	gitDir := filepath.Join(path, ".git")
	fi, err := os.Lstat(gitDir)
	switch {
	case err == nil && fi.IsDir():
	case os.IsNotExist(err):
		gitDir = path // a bare repository
	default:
		return "", false
	}
	var b strings.Builder
	add := func(p string, fi fs.FileInfo) {
		st, _ := fi.Sys().(*syscall.Stat_t)
		var ino uint64
		if st != nil {
			ino = st.Ino
		}
		fmt.Fprintf(&b, "%s|%d|%d|%d\n", p, ino, fi.Size(), fi.ModTime().UnixNano())
	}
	for _, name := range []string{"HEAD", "packed-refs"} {
		if fi, err := os.Lstat(filepath.Join(gitDir, name)); err == nil {
			add(name, fi)
		}
	}
	err = filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		add(p, fi)
		return nil
	})
	if err != nil {
		return "", false
	}
	return b.String(), true
}
