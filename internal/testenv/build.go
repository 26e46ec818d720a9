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
// the same file lock as BuildLocalCluster, and returns its path. It is
// built without cgo, as `make build` and the image build it (and as `make
// test` builds the tests, which then share Go's build cache with it).
func BuildWavecd(ctx context.Context, root string) (string, error) {
	return buildLocked(ctx, root, binary{name: "wavecd", module: ".", pkg: "./cmd/wavecd", env: []string{"CGO_ENABLED=0"}})
}

// binary is an executable of this repository: bin/<name>, built from pkg
// in the module rooted at <root>/<module>, with env added to the
// environment.
type binary struct {
	name, module, pkg string
	env               []string
}

// lockBin takes the lock test packages building into bin take, waiting
// for it; the returned function releases it.
func lockBin(bin string) (func(), error) {
	lock, err := os.OpenFile(filepath.Join(bin, ".localcluster.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open build lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("take build lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
	}, nil
}

func buildLocked(ctx context.Context, root string, b binary) (string, error) {
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("create bin directory: %w", err)
	}
	unlock, err := lockBin(bin)
	if err != nil {
		return "", err
	}
	defer unlock()
	out := filepath.Join(bin, b.name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, b.pkg)
	cmd.Dir = filepath.Join(root, b.module)
	cmd.Env = append(os.Environ(), b.env...)
	if log, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", b.name, err, log)
	}
	return out, nil
}

// BuildKarpenter builds Karpenter's KWOK provider (karpenter-kwok) and
// copies Karpenter's CRDs (karpenter-crds/) into binDir, with
// localcluster/karpenter/build.sh under root, when either is missing, under
// the lock BuildLocalCluster takes. A cold build takes minutes.
func BuildKarpenter(ctx context.Context, root, binDir string) error {
	return buildOperator(ctx, root, binDir, "karpenter", "karpenter-kwok", "karpenter-crds")
}

// BuildOperators builds the operators the local cluster runs as processes
// into binDir, each when missing: Karpenter's KWOK provider (and its CRDs)
// and the Tigera operator. A cold build takes minutes each.
func BuildOperators(ctx context.Context, root, binDir string) error {
	if err := BuildKarpenter(ctx, root, binDir); err != nil {
		return err
	}
	return buildOperator(ctx, root, binDir, "tigera", "tigera-operator", "")
}

// buildOperator runs localcluster/<module>/build.sh binDir unless binDir
// holds program, the version file its build writes beside it, and (when
// set) files in folder.
func buildOperator(ctx context.Context, root, binDir, module, program, folder string) error {
	unlock, err := lockBin(binDir)
	if err != nil {
		return err
	}
	defer unlock()
	built := true
	for _, f := range []string{program, program + ".version"} {
		if _, err := os.Stat(filepath.Join(binDir, f)); err != nil {
			built = false
		}
	}
	if folder != "" {
		files, _ := filepath.Glob(filepath.Join(binDir, folder, "*.yaml"))
		built = built && len(files) > 0
	}
	if built {
		return nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "localcluster", module, "build.sh"), binDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", program, err, out)
	}
	return nil
}
