package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/wavecd/wavecd/localcluster/internal/forkthread"
)

// child is a component process started by the supervisor.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// stopped is set before the supervisor stops the child on purpose: its
	// exit does not end the cluster.
	stopped bool
}

// start runs `self component <name> args...` with its output in logPath.
func startChild(starter *forkthread.Starter, name, logPath string, args, env []string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	cmd := exec.Command(self, append([]string{ComponentCommand, name}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := starter.Start(cmd); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = logFile.Close()
		close(c.done)
	}()
	return c, nil
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
func (c *child) stop(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// ComponentCommand is the hidden argument that makes the binary run one
// control-plane component in the foreground.
const ComponentCommand = "__component"

// processAlive reports whether pid runs and its command line mentions
// marker; the check guards against a pid reused by an unrelated process.
func processAlive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil && isZombie(stat) {
		return false
	}
	return bytes.Contains(cmdline, []byte(marker))
}

func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// signalPID sends sig to pid when it is still the process we started.
func signalPID(pid int, marker string, sig syscall.Signal) error {
	if !processAlive(pid, marker) {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal pid %d: %w", pid, err)
	}
	return nil
}

// waitGone waits until no listed pid is alive or the timeout passes.
func waitGone(pids []int, marker string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		alive := false
		for _, p := range pids {
			if processAlive(p, marker) {
				alive = true
			}
		}
		if !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
