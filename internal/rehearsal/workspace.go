package rehearsal

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultWorkspace is the workspace directory, relative to the current
// directory.
const DefaultWorkspace = ".wavecd"

// Workspace names the files of a rehearsal's working directory.
type Workspace struct{ Dir string }

// NewWorkspace returns the workspace at dir (DefaultWorkspace when empty),
// with an absolute path.
func NewWorkspace(dir string) (Workspace, error) {
	if dir == "" {
		dir = DefaultWorkspace
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, fmt.Errorf("resolve workspace %s: %w", dir, err)
	}
	return Workspace{Dir: abs}, nil
}

// Cluster is the local cluster's directory.
func (w Workspace) Cluster() string { return filepath.Join(w.Dir, "cluster") }

// ClusterStart records how the cluster was started, so a later run with
// other options restarts it.
func (w Workspace) ClusterStart() string { return filepath.Join(w.Dir, "cluster-start.json") }

// Kubeconfig is the admin kubeconfig users point kubectl at.
func (w Workspace) Kubeconfig() string { return filepath.Join(w.Dir, "kubeconfig") }

// Repo is the Git snapshot or clone of the repository under test.
func (w Workspace) Repo() string { return filepath.Join(w.Dir, "repo") }

// Cache holds the controller's clones of remote repositories.
func (w Workspace) Cache() string { return filepath.Join(w.Dir, "cache") }

// ControllerLog is the log of the in-process controller.
func (w Workspace) ControllerLog() string { return filepath.Join(w.Dir, "controller.log") }

// ensure creates the workspace directory.
func (w Workspace) ensure() error {
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return fmt.Errorf("create workspace %s: %w", w.Dir, err)
	}
	return nil
}

// exists reports whether the workspace directory is there.
func (w Workspace) exists() bool {
	_, err := os.Stat(w.Dir)
	return err == nil
}
