package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/plugin"
)

const cmpServerLong = `Serve one Config Management Plugin to the controller, as Argo CD's
argocd-cmp-server does: run as a sidecar container next to the plugin's
tools, it reads the plugin's ConfigManagementPlugin file and listens on
<socket-dir>/<name>.sock, where <name> is metadata.name-spec.version (or the
name alone). The controller, started with --plugins-dir on the same folder,
finds the socket and sends each source to render.

Each request gets a fresh copy of the repository in --work-dir, removed
afterwards; commands run there with this container's environment plus the
variables Argo CD gives plugins, and are killed after --timeout.`

// cmpServerAction serves one plugin on a Unix socket.
type cmpServerAction struct {
	errOut    interface{ Write([]byte) (int, error) }
	config    string
	socketDir string
	workDir   string
	limits    plugin.Limits
	verbose   bool
	copyTo    string
}

func newCmpServerCommand(s Streams) *cobra.Command {
	a := &cmpServerAction{errOut: s.Err}
	cmd := &cobra.Command{
		Use:     "cmp-server",
		Short:   "Serve a Config Management Plugin from a sidecar container",
		Long:    cmpServerLong,
		Example: "  wavecd cmp-server --config /home/argocd/cmp-server/config/plugin.yaml --socket-dir /home/argocd/cmp-server/plugins",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.Run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&a.config, "config", "/home/argocd/cmp-server/config/plugin.yaml", "the ConfigManagementPlugin file (or a ConfigMap with it under plugin.yaml)")
	f.StringVar(&a.socketDir, "socket-dir", "/home/argocd/cmp-server/plugins", "folder shared with the controller (its --plugins-dir) where the socket is created")
	f.StringVar(&a.workDir, "work-dir", "", "folder for the repository copies (default: the system's temp folder)")
	f.DurationVar(&a.limits.Timeout, "timeout", 90*time.Second, "how long each plugin command may run")
	f.Int64Var(&a.limits.MaxOutput, "max-output", 64<<20, "how many bytes a plugin command may print")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "log every request")
	f.StringVar(&a.copyTo, "copy-to", "", "copy this (static) binary to the path and exit: an init container's job, so a plugin's image can run it")
	return cmd
}

// Run serves until ctx ends.
func (a *cmpServerAction) Run(ctx context.Context) error {
	setLoggers(a.errOut, logLevel(a.verbose))
	if a.copyTo != "" {
		return copySelf(a.copyTo)
	}
	data, err := os.ReadFile(a.config)
	if err != nil {
		return fmt.Errorf("read plugin configuration: %w", err)
	}
	cfgs, err := plugin.Parse(a.config, data)
	if err != nil {
		return err
	}
	if len(cfgs) != 1 {
		return fmt.Errorf("%s: want one ConfigManagementPlugin, found %d", a.config, len(cfgs))
	}
	svc := &plugin.Service{Config: cfgs[0], BaseEnv: os.Environ(), Limits: a.limits, WorkDir: a.workDir}
	return plugin.Serve(ctx, svc, a.socketDir)
}

// copySelf copies the running executable to dst, executable by all.
func copySelf(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("copy this binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("copy this binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy this binary to %s: %w", dst, err)
	}
	return out.Close()
}
