package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// StartDetached runs the supervisor as a background session leader with
// args (the start command without --detach) and returns once the cluster
// is usable, or with the supervisor's last log lines when it fails.
func StartDetached(ctx context.Context, dir string, args []string, timeout time.Duration) (State, error) {
	l := Layout{Dir: dir}
	if err := os.MkdirAll(filepath.Dir(l.Log("x")), 0o700); err != nil {
		return State{}, fmt.Errorf("create cluster directory: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return State{}, fmt.Errorf("find own executable: %w", err)
	}
	logFile, err := os.OpenFile(l.Log("supervisor"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return State{}, fmt.Errorf("open supervisor log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return State{}, fmt.Errorf("start supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return waitReady(ctx, l, cmd.Process.Pid, exited, timeout)
}

func waitReady(ctx context.Context, l Layout, pid int, exited <-chan error, timeout time.Duration) (State, error) {
	deadline := time.After(timeout)
	for {
		st, err := ReadState(l)
		if err == nil && st.SupervisorPID == pid && st.Ready {
			return st, nil
		}
		select {
		case err := <-exited:
			return st, fmt.Errorf("cluster supervisor exited (%w):\n%s", err, tail(l.Log("supervisor"), 15))
		case <-deadline:
			_ = syscall.Kill(pid, syscall.SIGTERM)
			return st, fmt.Errorf("cluster not ready after %s:\n%s", timeout, tail(l.Log("supervisor"), 15))
		case <-ctx.Done():
			_ = syscall.Kill(pid, syscall.SIGTERM)
			return st, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log at " + path + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Stop ends the cluster in dir: SIGTERM to the supervisor, SIGKILL to it
// and to any component still alive after the grace period, then waits
// until the cluster's ports are free. Stopping a stopped cluster is a no-op.
func Stop(ctx context.Context, dir string, grace time.Duration) (wasRunning bool, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("resolve --dir: %w", err)
	}
	l := Layout{Dir: dir}
	st, err := ReadState(l)
	if err != nil {
		return false, err
	}
	pids := []int{st.SupervisorPID}
	for _, p := range st.Children {
		pids = append(pids, p)
	}
	wasRunning = processAlive(st.SupervisorPID, dir)
	if err := signalPID(st.SupervisorPID, dir, syscall.SIGTERM); err != nil {
		return wasRunning, err
	}
	if !waitGone(pids, dir, grace) {
		for _, p := range pids {
			if err := signalPID(p, dir, syscall.SIGKILL); err != nil {
				return wasRunning, err
			}
		}
		if !waitGone(pids, dir, 5*time.Second) {
			return wasRunning, fmt.Errorf("processes of %s still alive after SIGKILL", dir)
		}
	}
	return wasRunning, waitPortsFree(ctx, st.Ports, 10*time.Second)
}

func waitPortsFree(ctx context.Context, p Ports, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, port := range p.All() {
		for port != 0 && !portFree(port) {
			if time.Now().After(deadline) {
				return fmt.Errorf("port %d still in use after stop", port)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// Status describes a cluster directory.
type Status struct {
	Dir        string `json:"dir"`
	Running    bool   `json:"running"`
	Ready      bool   `json:"ready"`
	PID        int    `json:"pid,omitempty"`
	Server     string `json:"server,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	NodesReady int    `json:"nodesReady"`
	NodesTotal int    `json:"nodesTotal"`
	Uptime     string `json:"uptime,omitempty"`
	Error      string `json:"error,omitempty"`
}

// GetStatus reads the state file and, when the cluster runs, asks the API
// server for its nodes.
func GetStatus(ctx context.Context, dir string) (Status, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Status{}, fmt.Errorf("resolve --dir: %w", err)
	}
	l := Layout{Dir: dir}
	st, err := ReadState(l)
	if err != nil {
		return Status{Dir: dir}, err
	}
	out := Status{Dir: dir, Error: st.Error}
	if !processAlive(st.SupervisorPID, dir) {
		return out, nil
	}
	out.Running, out.Ready, out.PID = true, st.Ready, st.SupervisorPID
	out.Server, out.Kubeconfig = Server(st.Ports.APIServer), l.Kubeconfig()
	out.Uptime = time.Since(st.StartedAt).Round(time.Second).String()
	if !st.Ready {
		return out, nil
	}
	pki, err := ensurePKI(l)
	if err != nil {
		return out, err
	}
	client, err := kubernetes.NewForConfig(restConfig(pki, st.Ports.APIServer))
	if err != nil {
		return out, fmt.Errorf("build client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out.NodesReady, out.NodesTotal, err = countReadyNodes(ctx, client)
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}
