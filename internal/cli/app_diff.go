package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/diff"
)

const appDiffLong = `Compare an application's desired state with the cluster, as a refresh does:
render the source (from Git, or with --local from a folder on disk), predict
what an apply would store with a server-side dry run, and print a unified
diff from the live object to that prediction for every object that differs.

Each object starts with a line "===== GROUP/KIND NAMESPACE/NAME ======", as
argocd app diff prints it. Secret values are masked. Hooks are left out.

Exit codes: 0 when nothing differs, 1 when something does, 2 on errors.`

const appDiffExample = `  # what a sync would change
  wavecd app diff guestbook

  # compare with a local checkout of the app's source folder
  wavecd app diff guestbook --local ./guestbook`

// appDiffAction compares one app with the cluster.
type appDiffAction struct {
	flags    *appFlags
	out      io.Writer
	Name     string
	Local    string
	CacheDir string
	Mirrors  []string
}

func newAppDiffCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appDiffAction{flags: f, out: s.Out}
	cmd := &cobra.Command{
		Use:     "diff NAME",
		Short:   "Show what differs between Git and the cluster",
		Long:    appDiffLong,
		Example: appDiffExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.Name = args[0]
			return a.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Local, "local", "", "render this folder (the source's path on disk) instead of the source in Git")
	fl.StringVar(&a.CacheDir, "cache-dir", "", "folder for fetched repositories (default: the user cache folder)")
	fl.StringArrayVar(&a.Mirrors, "mirror", nil, mirrorUsage)
	return cmd
}

// Run prints the differences; an error carries exit code 1 when objects
// differ and 2 when the comparison failed.
func (a *appDiffAction) Run(ctx context.Context) error {
	diffs, err := a.diff(ctx)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	for _, d := range diffs {
		fmt.Fprintf(a.out, "\n===== %s/%s %s/%s ======\n", d.GVK.Group, d.GVK.Kind, d.Namespace, d.Name)
		text := d.Text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprint(a.out, text)
	}
	if len(diffs) > 0 {
		return &ExitError{Code: 1, Quiet: true, Err: fmt.Errorf("%d object(s) of application %q differ from the desired state", len(diffs), a.Name)}
	}
	return nil
}

func (a *appDiffAction) diff(ctx context.Context) ([]diff.Result, error) {
	mirrors, err := parseMirrorFlags(a.Mirrors)
	if err != nil {
		return nil, err
	}
	c, name, err := a.flags.clientFor(a.Name)
	if err != nil {
		return nil, err
	}
	app, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	cfg, err := a.flags.kube.restConfig()
	if err != nil {
		return nil, err
	}
	differ := compare.NewDiffer(cfg, compare.DifferOptions{CacheDir: a.CacheDir, Mirrors: mirrors, Namespace: a.flags.namespace})
	if a.Local != "" {
		return differ.DiffLocal(ctx, app, a.Local)
	}
	return differ.Diff(ctx, app)
}
