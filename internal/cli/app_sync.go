package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/compare"
)

const appSyncLong = `Sync an application to its target state, like argocd app sync --core.

The command writes the app's operation field (operation.sync with the revision,
prune, dry run, selected objects and sync options; initiatedBy.username is your
kubeconfig user or --username) and then follows status.operationState, printing
the phase and message to standard error as they change, until the operation is
Succeeded, Failed or Error. It exits 1 when the sync fails, errors or times out.
With --async it returns as soon as the operation is written.

It refuses when another operation is pending or running, and a revision other
than the target of an app with automated sync. Without --sync-option the app's
spec.syncPolicy.syncOptions apply.

With --local the folder is rendered here, as the app's source would be, and
the objects travel in operation.sync.manifests: the controller syncs them
instead of what Git holds, and the app shows OutOfSync against Git after.`

const appSyncExample = `  # sync and wait at most 5 minutes
  wavecd app sync guestbook --timeout 300

  # sync only a Deployment and a Service, pruning, without waiting
  wavecd app sync guestbook --resource apps:Deployment:web --resource :Service:web --prune --async

  # an object in a given namespace, with server-side apply
  wavecd app sync guestbook --resource apps:Deployment:prod/web --server-side

  # sync what a local checkout of the app's source folder renders
  wavecd app sync guestbook --local ./guestbook`

// operationFlags control how a command that writes an operation follows it.
type operationFlags struct {
	async    bool
	timeout  uint
	username string
}

func (o *operationFlags) addTo(fs *pflag.FlagSet) {
	fs.BoolVar(&o.async, "async", false, "return once the operation is written, without waiting for it")
	fs.UintVar(&o.timeout, "timeout", 0, "seconds to wait for the operation to finish (0: no limit)")
	fs.StringVar(&o.username, "username", "", "name recorded in operation.initiatedBy (default: the kubeconfig user)")
}

// syncFlags are the sync options that become sync options or a retry.
type syncFlags struct {
	serverSide, replace, outOfSyncOnly bool
	retryLimit                         int64
	retryBackoff, retryMaxBackoff      time.Duration
	retryFactor                        int64
}

func (f *syncFlags) addTo(fs *pflag.FlagSet) {
	fs.BoolVar(&f.serverSide, "server-side", false, "use server-side apply (sync option ServerSideApply=true)")
	fs.BoolVar(&f.replace, "replace", false, "replace objects instead of applying them (sync option Replace=true)")
	fs.BoolVar(&f.outOfSyncOnly, "apply-out-of-sync-only", false, "apply only out-of-sync objects (sync option ApplyOutOfSyncOnly=true)")
	fs.Int64Var(&f.retryLimit, "retry-limit", 0, "retry a failed sync this many times (-1: without limit)")
	fs.DurationVar(&f.retryBackoff, "retry-backoff-duration", 5*time.Second, "first retry backoff")
	fs.DurationVar(&f.retryMaxBackoff, "retry-backoff-max-duration", 3*time.Minute, "longest retry backoff")
	fs.Int64Var(&f.retryFactor, "retry-backoff-factor", 2, "backoff multiplier after each retry")
}

func (f *syncFlags) apply(a *appclient.Sync) {
	for _, o := range []struct {
		on     bool
		option string
	}{{f.replace, "Replace=true"}, {f.serverSide, "ServerSideApply=true"}, {f.outOfSyncOnly, "ApplyOutOfSyncOnly=true"}} {
		if o.on {
			a.SyncOptions = append(a.SyncOptions, o.option)
		}
	}
	if f.retryLimit != 0 {
		factor := f.retryFactor
		a.Retry = &v1alpha1.RetryStrategy{Limit: f.retryLimit, Backoff: &v1alpha1.Backoff{
			Duration: f.retryBackoff.String(), MaxDuration: f.retryMaxBackoff.String(), Factor: &factor,
		}}
	}
}

func newAppSyncCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appclient.Sync{}
	var of operationFlags
	var sf syncFlags
	var resources []string
	var local string
	cmd := &cobra.Command{
		Use:     "sync NAME",
		Short:   "Sync an application to its target state",
		Long:    appSyncLong,
		Example: appSyncExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sf.apply(a)
			for _, s := range resources {
				r, err := appclient.ParseResource(s)
				if err != nil {
					return err
				}
				a.Resources = append(a.Resources, r)
			}
			return runOperation(cmd.Context(), s, f, args[0], of, func(c *appclient.Client, name string) (*v1alpha1.Application, error) {
				a.Client, a.Name = c, name
				if local != "" {
					var err error
					if a.Manifests, err = renderLocal(cmd.Context(), f, c, name, local); err != nil {
						return nil, err
					}
				}
				return a.Run(cmd.Context())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Revision, "revision", "", "sync to this revision instead of the target revision")
	fl.BoolVar(&a.Prune, "prune", false, "delete objects that are no longer in Git")
	fl.BoolVar(&a.DryRun, "dry-run", false, "preview the sync without changing the cluster")
	fl.StringArrayVar(&resources, "resource", nil, "sync only objects matching GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME; GROUP is empty for core kinds, fields may be globs (repeatable)")
	fl.StringArrayVar(&a.SyncOptions, "sync-option", nil, "sync option such as CreateNamespace=true, replacing the app's options (repeatable)")
	fl.StringVar(&a.Strategy, "strategy", "", "sync strategy: hook (default) or apply (no hooks)")
	fl.BoolVar(&a.Force, "force", false, "delete and re-create objects that cannot be patched")
	fl.StringVar(&local, "local", "", "sync what this folder (the source's path on disk) renders instead of the source in Git (an app with automated sync: with --dry-run only)")
	sf.addTo(fl)
	of.addTo(fl)
	return cmd
}

// renderLocal renders the folder dir for the app name as its controller
// would render the app's source, one manifest per object.
func renderLocal(ctx context.Context, f *appFlags, c *appclient.Client, name, dir string) ([]string, error) {
	app, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	cfg, err := f.kube.restConfig()
	if err != nil {
		return nil, err
	}
	objs, err := compare.NewDiffer(cfg, compare.DifferOptions{Namespace: f.namespace}).RenderLocal(ctx, app, dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		out = append(out, string(b))
	}
	return out, nil
}

// runOperation connects for arg, lets write request an operation and
// follows it.
func runOperation(ctx context.Context, s Streams, f *appFlags, arg string, o operationFlags,
	write func(c *appclient.Client, name string) (*v1alpha1.Application, error),
) error {
	c, name, err := f.clientFor(arg)
	if err != nil {
		return err
	}
	if o.username != "" {
		c.Username = o.username
	}
	app, err := write(c, name)
	if err != nil {
		return err
	}
	return followOperation(ctx, s, c, app, o)
}

// followOperation waits for a written operation unless --async, prints
// progress to stderr and the final state to stdout, and turns a failed
// operation into exit code 1.
func followOperation(ctx context.Context, s Streams, c *appclient.Client, app *v1alpha1.Application, o operationFlags) error {
	if o.async {
		fmt.Fprintf(s.Err, "operation requested on application %q\n", qualifiedName(app))
		return nil
	}
	w := &appclient.WaitOperation{
		Client: c, Name: app.Name, Operation: app.Operation,
		Timeout: time.Duration(o.timeout) * time.Second,
		OnProgress: func(st *v1alpha1.OperationState) {
			fmt.Fprintf(s.Err, "%s  %-11s %s\n", time.Now().Format(time.TimeOnly), st.Phase, st.Message)
		},
		OnUnclaimed: func(waited time.Duration) {
			fmt.Fprintf(s.Err, "%s  warning: no controller has started the operation after %s: is a wavecd controller "+
				"(\"wavecd controller\", or \"wavecd up\" for a local cluster) running for namespace %q? "+
				"The operation stays requested until one does.\n", time.Now().Format(time.TimeOnly), waited, c.Namespace)
		},
	}
	final, err := w.Run(ctx)
	if final != nil {
		if perr := printFinalState(s, final); perr != nil {
			return perr
		}
	}
	var opErr *appclient.OperationError
	var toErr *appclient.TimeoutError
	if errors.As(err, &opErr) || errors.As(err, &toErr) {
		return &ExitError{Code: 1, Err: err}
	}
	return err
}

// printFinalState prints the app summary, its last operation and its
// objects, as argocd does after a sync or wait.
func printFinalState(s Streams, app *v1alpha1.Application) error {
	if err := printAppHeader(s.Out, app); err != nil {
		return err
	}
	if len(app.Status.Resources) == 0 {
		return nil
	}
	fmt.Fprintln(s.Out)
	return printResourceTable(s.Out, &appclient.AppTree{App: app})
}

func newAppRollbackCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appclient.Rollback{}
	var of operationFlags
	cmd := &cobra.Command{
		Use:   "rollback NAME [ID]",
		Short: "Roll an application back to a deployment of its history",
		Long: `Sync an application to the source and revision of a history entry (see app
history); without ID, to the deployment before the last one. Like Argo CD it is
refused while automated sync is on: the next automated sync would undo it.
It follows the operation like app sync.`,
		Example: `  wavecd app history guestbook
  wavecd app rollback guestbook 3 --timeout 300`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.ID = -1
			if len(args) == 2 {
				id, err := strconv.ParseInt(args[1], 10, 64)
				if err != nil || id < 0 {
					return fmt.Errorf("invalid history ID %q: want a number from app history", args[1])
				}
				a.ID = id
			}
			return runOperation(cmd.Context(), s, f, args[0], of, func(c *appclient.Client, name string) (*v1alpha1.Application, error) {
				a.Client, a.Name = c, name
				return a.Run(cmd.Context())
			})
		},
	}
	cmd.Flags().BoolVar(&a.Prune, "prune", false, "delete objects that the old revision does not have")
	cmd.Flags().BoolVar(&a.DryRun, "dry-run", false, "preview the rollback without changing the cluster")
	of.addTo(cmd.Flags())
	return cmd
}

func newAppWaitCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appclient.Wait{}
	var timeout uint
	cmd := &cobra.Command{
		Use:   "wait NAME...",
		Short: "Wait for applications to be synced, healthy and idle",
		Long: `Wait until each application reaches the states asked for, like argocd app
wait. Without --sync, --health or --operation it waits for all three: sync
status Synced, health Healthy, and no operation pending or running (after a
sync, until the controller has compared the app again). --suspended and
--degraded accept those health states too. A watched app whose health turns
Degraded ends the wait with an error. Changes print to standard error; the
final state prints to standard output.`,
		Example: `  wavecd app wait guestbook --timeout 300
  wavecd app wait guestbook --health --suspended`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.Timeout = time.Duration(timeout) * time.Second
			for _, arg := range args {
				if err := runWait(cmd.Context(), s, f, a, arg); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&a.For.Sync, "sync", false, "wait for sync status Synced")
	fl.BoolVar(&a.For.Health, "health", false, "wait for health Healthy")
	fl.BoolVar(&a.For.Operation, "operation", false, "wait until no operation is pending or running")
	fl.BoolVar(&a.For.Suspended, "suspended", false, "accept health Suspended")
	fl.BoolVar(&a.For.Degraded, "degraded", false, "accept health Degraded")
	fl.UintVar(&timeout, "timeout", 0, "seconds to wait (0: no limit)")
	return cmd
}

func runWait(ctx context.Context, s Streams, f *appFlags, a *appclient.Wait, arg string) error {
	c, name, err := f.clientFor(arg)
	if err != nil {
		return err
	}
	a.Client, a.Name = c, name
	var last string
	a.OnChange = func(app *v1alpha1.Application) {
		phase := "none"
		if app.Operation != nil {
			phase = "requested"
		}
		if st := app.Status.OperationState; st != nil && app.Operation == nil {
			phase = string(st.Phase)
		}
		line := fmt.Sprintf("sync=%s health=%s operation=%s", app.Status.Sync.Status, app.Status.Health.Status, phase)
		if line != last {
			fmt.Fprintf(s.Err, "%s  %s  %s\n", time.Now().Format(time.TimeOnly), qualifiedName(app), line)
			last = line
		}
	}
	final, err := a.Run(ctx)
	if final != nil {
		if perr := printFinalState(s, final); perr != nil {
			return perr
		}
	}
	var toErr *appclient.TimeoutError
	if errors.As(err, &toErr) {
		return &ExitError{Code: 1, Err: err}
	}
	return err
}
