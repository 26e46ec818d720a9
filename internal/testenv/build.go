package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// RepoRoot finds the main module's root by walking up from the working
// directory to the go.mod that declares it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/wavecd/wavecd\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find repository root: no go.mod of github.com/wavecd/wavecd above the working directory")
		}
		dir = parent
	}
}

// BuildLocalCluster builds bin/wavecd-localcluster under root and returns
// its path. Test packages running in parallel take a file lock so only one
// of them builds at a time; the others find the binary up to date.
func BuildLocalCluster(ctx context.Context, root string) (string, error) {
	return buildLocked(ctx, root, binary{name: "wavecd-localcluster", module: "localcluster", pkg: "./cmd/wavecd-localcluster"})
}

// BuildWavecd builds bin/wavecd from the current source under root, under
// the same file lock as BuildLocalCluster, and returns its path.
func BuildWavecd(ctx context.Context, root string) (string, error) {
	return buildLocked(ctx, root, binary{name: "wavecd", module: ".", pkg: "./cmd/wavecd"})
}

// binary is an executable of this repository: bin/<name>, built from pkg
// in the module rooted at <root>/<module>.
type binary struct {
	name, module, pkg string
}

func buildLocked(ctx context.Context, root string, b binary) (string, error) {
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("create bin directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(bin, ".localcluster.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("open build lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("take build lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close as well
	out := filepath.Join(bin, b.name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, b.pkg)
	cmd.Dir = filepath.Join(root, b.module)
	if log, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", b.name, err, log)
	}
	return out, nil
}
