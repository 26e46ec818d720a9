package rehearsal

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

// LocalClusterEnv names the environment variable that points at the
// wavecd-localcluster binary, ahead of any other place.
const LocalClusterEnv = "WAVECD_LOCALCLUSTER"

const localClusterName = "wavecd-localcluster"

// FindLocalCluster returns the wavecd-localcluster binary: the one
// $WAVECD_LOCALCLUSTER names, else the one next to the running executable
// (bin/ after make build), else the first on PATH.
func FindLocalCluster() (string, error) {
	if p := os.Getenv(LocalClusterEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", LocalClusterEnv, p, err)
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

// localCluster drives a wavecd-localcluster in a directory through its
// command line.
type localCluster struct {
	binary string
	dir    string
}

// clusterStatus is the part of `status -o json` a rehearsal reads.
type clusterStatus struct {
	Running    bool   `json:"running"`
	Ready      bool   `json:"ready"`
	PID        int    `json:"pid"`
	NodesReady int    `json:"nodesReady"`
	NodesTotal int    `json:"nodesTotal"`
	Error      string `json:"error"`
}

func (c localCluster) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.binary, append(args, "--dir", c.dir)...)
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

func (c localCluster) status(ctx context.Context) (clusterStatus, error) {
	var st clusterStatus
	if _, err := os.Stat(c.dir); errors.Is(err, os.ErrNotExist) {
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

// clusterStart is how a cluster starts: from a profile (node groups, CNI
// mode, processes, workload overrides, ingress controller), else with
// Nodes plain nodes; TimeScale multiplies its simulated delays.
type clusterStart struct {
	Nodes     int     `json:"nodes,omitempty"`
	Profile   string  `json:"profile,omitempty"`
	TimeScale float64 `json:"timeScale,omitempty"`
}

func (o clusterStart) args() []string {
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

func (c localCluster) start(ctx context.Context, o clusterStart) error {
	_, err := c.run(ctx, o.args()...)
	return err
}

func (c localCluster) stop(ctx context.Context) error {
	if _, err := os.Stat(c.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := c.run(ctx, "stop")
	return err
}

// ensureRunning starts the cluster unless it runs already with the same
// start options (recorded in started), and reports how: "started",
// "reused", or "restarted" when the options changed (its data stays).
func (c localCluster) ensureRunning(ctx context.Context, o clusterStart, started string) (how string, st clusterStatus, err error) {
	st, err = c.status(ctx)
	if err != nil {
		return "", st, err
	}
	var prev clusterStart
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
		if err := c.stop(ctx); err != nil {
			return "", st, err
		}
	}
	if err := c.start(ctx, o); err != nil {
		return "", st, err
	}
	b, _ := json.Marshal(o)
	if err := os.WriteFile(started, b, 0o600); err != nil {
		return "", st, fmt.Errorf("record how the cluster started: %w", err)
	}
	st, err = c.status(ctx)
	return how, st, err
}

// copyKubeconfig copies the cluster's kubeconfig to dst.
func (c localCluster) copyKubeconfig(dst string) error {
	b, err := os.ReadFile(filepath.Join(c.dir, "kubeconfig"))
	if err != nil {
		return fmt.Errorf("read cluster kubeconfig: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}
