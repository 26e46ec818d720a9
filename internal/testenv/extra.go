package testenv

import (
	"context"
	"os"
	"testing"
	"time"
)

// StartCluster starts one more local cluster, shaped by o, for a test that
// needs a second cluster (a deployment target besides the package's own).
// It runs as a child of the test process like the package's cluster, and
// is stopped by its supervisor's PID, its directory removed, when the test
// ends. Starting takes some seconds: use it for the few tests that need it.
func StartCluster(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	bin, args, wavecd, err := prepare(ctx, o)
	if err != nil {
		t.Fatalf("testenv: second cluster: %v", err)
	}
	dir, err := os.MkdirTemp("", "wavecd-testenv-extra-")
	if err != nil {
		t.Fatalf("testenv: second cluster directory: %v", err)
	}
	p, err := startCluster(ctx, startOptions{Binary: bin, Dir: dir, Args: args, Timeout: 3 * time.Minute})
	if err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("testenv: second cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("testenv: stop second cluster: %v", err)
			return
		}
		_ = os.RemoveAll(dir)
	})
	env, err := newEnv(dir)
	if err != nil {
		t.Fatalf("testenv: second cluster: %v", err)
	}
	env.Wavecd = wavecd
	return env
}
