package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Env names the environment variable that points at the
// wavecd-localcluster binary, ahead of any other place.
const Env = "WAVECD_LOCALCLUSTER"

const localClusterName = "wavecd-localcluster"

// Find returns the wavecd-localcluster binary: the one $WAVECD_LOCALCLUSTER
// names, else the one next to the running executable (bin/ after make
// build), else the first on PATH.
func Find() (string, error) {
	if p := os.Getenv(Env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", Env, p, err)
		}
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), localClusterName)
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(localClusterName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to this executable or on PATH: run make build", localClusterName)
}

// Cluster drives a wavecd-localcluster in a directory through its
// command line.
type Cluster struct {
	// Binary is wavecd-localcluster.
	Binary string
	// Dir is the cluster's directory.
	Dir string
}

// Status is the part of `status -o json` a rehearsal reads.
type Status struct {
	Running    bool   `json:"running"`
	Ready      bool   `json:"ready"`
	PID        int    `json:"pid"`
	NodesReady int    `json:"nodesReady"`
	NodesTotal int    `json:"nodesTotal"`
	Error      string `json:"error"`
}

func (c Cluster) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Binary, append(args, "--dir", c.Dir)...)
	// An interrupted start stops the supervisor it spawned; a kill would not.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		return nil, fmt.Errorf("%s %s: %w\n%s", localClusterName, args[0], err, msg)
	}
	return stdout.Bytes(), nil
}

// Status reports whether the cluster runs and is ready, and its nodes; a
// cluster whose directory does not exist is not running.
func (c Cluster) Status(ctx context.Context) (Status, error) {
	var st Status
	if _, err := os.Stat(c.Dir); errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	out, err := c.run(ctx, "status", "-o", "json")
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st, fmt.Errorf("parse %s status: %w", localClusterName, err)
	}
	return st, nil
}

// StartOptions say how a cluster starts: from a profile (node groups, CNI
// mode, processes, workload overrides, ingress controller), else with
// Nodes plain nodes; TimeScale multiplies its simulated delays.
type StartOptions struct {
	Nodes     int     `json:"nodes,omitempty"`
	Profile   string  `json:"profile,omitempty"`
	TimeScale float64 `json:"timeScale,omitempty"`
}

func (o StartOptions) args() []string {
	args := []string{"start", "--detach"}
	if o.Profile != "" {
		args = append(args, "--config", o.Profile)
	} else {
		args = append(args, "--nodes", strconv.Itoa(max(o.Nodes, 1)))
	}
	if o.TimeScale > 0 {
		args = append(args, "--time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64))
	}
	return args
}

// Start starts the cluster in the background (a supervisor process) and
// returns once it is usable.
func (c Cluster) Start(ctx context.Context, o StartOptions) error {
	_, err := c.run(ctx, o.args()...)
	return err
}

// Stop stops the cluster, waiting until none of its processes is left; a
// cluster whose directory does not exist is stopped already.
func (c Cluster) Stop(ctx context.Context) error {
	if _, err := os.Stat(c.Dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := c.run(ctx, "stop")
	return err
}

// EnsureRunning starts the cluster unless it runs already with the same
// start options (recorded in the file started), and reports how:
// "started", "reused", or "restarted" when the options changed (its data
// stays).
func (c Cluster) EnsureRunning(ctx context.Context, o StartOptions, started string) (how string, st Status, err error) {
	st, err = c.Status(ctx)
	if err != nil {
		return "", st, err
	}
	var prev StartOptions
	if b, err := os.ReadFile(started); err == nil {
		_ = json.Unmarshal(b, &prev)
	}
	how = "started"
	switch {
	case st.Running && st.Ready && prev == o:
		return "reused", st, nil
	case st.Running && st.Ready:
		how = "restarted (its profile or time scale changed)"
		fallthrough
	case st.Running:
		// A supervisor with other options, still starting or stuck: stop
		// it and start anew.
		if err := c.Stop(ctx); err != nil {
			return "", st, err
		}
	}
	if err := c.Start(ctx, o); err != nil {
		return "", st, err
	}
	b, _ := json.Marshal(o)
	if err := os.WriteFile(started, b, 0o600); err != nil {
		return "", st, fmt.Errorf("record how the cluster started: %w", err)
	}
	st, err = c.Status(ctx)
	return how, st, err
}

// CopyKubeconfig copies the cluster's admin kubeconfig to dst.
func (c Cluster) CopyKubeconfig(dst string) error {
	b, err := os.ReadFile(filepath.Join(c.Dir, "kubeconfig"))
	if err != nil {
		return fmt.Errorf("read cluster kubeconfig: %w", err)
	}
	// Written aside, then renamed into place: a reader that polls for the
	// file (kubectl, a watcher) never sees it half written.
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}
