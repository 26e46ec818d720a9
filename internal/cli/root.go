package cli

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// Streams are the standard streams a command reads and writes.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// ExitError carries a process exit code out of a command without exiting.
type ExitError struct {
	Code int
	Err  error
	// Quiet means the command already said everything: main prints no
	// "Error:" line (e.g. `app diff` exiting 1 because a diff was found).
	Quiet bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Report returns the message main should print for err, "" for none.
func Report(err error) string {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Quiet {
		return ""
	}
	return "Error: " + err.Error()
}

// ExitCode returns the exit code main should use for err.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// NewRootCommand builds the wavecd command tree.
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "wavecd",
		Short: "GitOps continuous delivery with health-gated sync waves",
		Long: `wavecd reconciles Argo CD Applications from Git into Kubernetes.

It reads Argo CD's manifests unchanged (Application, ApplicationSet, AppProject,
argocd-cm health customizations, sync waves and hooks) and gates app-of-apps
waves on real child health.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.AddCommand(newVersionCommand(s))
	root.AddCommand(newInstallCommand(s))
	root.AddCommand(newControllerCommand(s))
	root.AddCommand(newRenderCommand(s))
	root.AddCommand(newCmpServerCommand(s))
	root.AddCommand(newHealthCommand(s))
	root.AddCommand(newAppCommand(s))
	root.AddCommand(newAppsetCommand(s))
	root.AddCommand(newProjCommand(s))
	root.AddCommand(newClusterCommand(s))
	root.AddCommand(newUpCommand(s))
	root.AddCommand(newDownCommand(s))
	root.AddCommand(newRehearseCommand(s))
	root.AddCommand(newServerCommand(s))
	root.AddCommand(newAdminCommand(s))
	return root
}
