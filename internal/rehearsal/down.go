package rehearsal

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/wavecd/wavecd/internal/rehearsal/localcluster"
)

// Down stops a workspace's local cluster and removes the workspace:
// `wavecd down`.
type Down struct {
	// Out receives what was done.
	Out io.Writer
	// Workspace is the rehearsal's directory (default .wavecd).
	Workspace string
	// LocalCluster is the wavecd-localcluster binary (default:
	// localcluster.Find).
	LocalCluster string
}

// Run stops the cluster, waiting until none of its processes is left, and
// removes what a rehearsal wrote into the workspace; files it did not
// write stay, and so does the folder then.
func (d *Down) Run(ctx context.Context) error {
	out := d.Out
	if out == nil {
		out = io.Discard
	}
	ws, err := NewWorkspace(d.Workspace)
	if err != nil {
		return err
	}
	if !ws.exists() {
		fmt.Fprintf(out, "no local cluster: %s does not exist\n", displayPath(ws.Dir))
		return nil
	}
	if _, err := os.Stat(ws.Cluster()); err == nil {
		if d.LocalCluster == "" {
			if d.LocalCluster, err = localcluster.Find(); err != nil {
				return err
			}
		}
		if err := (localcluster.Cluster{Binary: d.LocalCluster, Dir: ws.Cluster()}).Stop(ctx); err != nil {
			return err
		}
	}
	for _, p := range []string{ws.Cluster(), ws.ClusterStart(), ws.Kubeconfig(), ws.Repo(), ws.Cache(), ws.ControllerLog()} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	if err := os.Remove(ws.Dir); err != nil {
		fmt.Fprintf(out, "local cluster stopped and removed; %s kept: it holds other files\n", displayPath(ws.Dir))
		return nil //nolint:nilerr // a folder with the user's own files is left on purpose
	}
	fmt.Fprintf(out, "local cluster stopped; %s removed\n", displayPath(ws.Dir))
	return nil
}
