package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// clusterProcess is a wavecd-localcluster supervisor running in the
// foreground as a child of the test process.
type clusterProcess struct {
	dir  string
	cmd  *exec.Cmd
	done chan error
}

// startOptions configure startCluster.
type startOptions struct {
	Binary string
	Dir    string
	// Args come after `start --dir DIR`: --nodes N, or --config FILE, and
	// any other flag of the start command.
	Args    []string
	Timeout time.Duration
}

// startCluster starts the supervisor and waits until its state file says
// the cluster is ready.
func startCluster(ctx context.Context, o startOptions) (*clusterProcess, error) {
	if err := os.MkdirAll(filepath.Join(o.Dir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	logFile, err := os.Create(filepath.Join(o.Dir, "logs", "supervisor.log"))
	if err != nil {
		return nil, fmt.Errorf("create supervisor log: %w", err)
	}
	cmd := exec.Command(o.Binary, append([]string{"start", "--dir", o.Dir}, o.Args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The parent-death signal fires when the forking thread exits, so fork
	// from a thread that stays locked for the life of the process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		started <- cmd.Start()
		select {} // keep the thread, and with it the child's parent, alive
	}()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	p := &clusterProcess{dir: o.Dir, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logFile.Close() }()
	if err := p.waitReady(ctx, o.Timeout); err != nil {
		_ = p.stop() // the readiness error is the one to report
		return nil, err
	}
	return p, nil
}

func (p *clusterProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		var st struct {
			SupervisorPID int  `json:"supervisorPID"`
			Ready         bool `json:"ready"`
		}
		if b, err := os.ReadFile(filepath.Join(p.dir, "state.json")); err == nil && json.Unmarshal(b, &st) == nil &&
			st.Ready && st.SupervisorPID == p.cmd.Process.Pid {
			return nil
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("local cluster exited before it was ready (%w):\n%s", err, p.logTail())
		case <-deadline:
			return fmt.Errorf("local cluster not ready after %s:\n%s", timeout, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *clusterProcess) logTail() string {
	b, err := os.ReadFile(filepath.Join(p.dir, "logs", "supervisor.log"))
	if err != nil {
		return "(no supervisor log)"
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// stop ends the supervisor by its pid and waits for it; the supervisor
// stops its own components before it exits.
func (p *clusterProcess) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return err
		}
		return nil
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("local cluster in %s did not stop within 45s; killed", p.dir)
	}
}
