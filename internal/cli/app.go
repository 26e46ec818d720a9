package cli

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/appclient"
)

const appLong = `Manage Argo CD Applications through the Kubernetes API, like argocd --core.

Every command reads and writes Application objects with your kubeconfig
(--kubeconfig, $KUBECONFIG or ~/.kube/config; --context picks a context) in
the namespace -n (default argocd). NAME may also be NAMESPACE/NAME, or take
its namespace from -N, for an app outside the control namespace (Argo CD's
apps in any namespace).

sync and rollback only request an operation by writing the app's operation
field; the wavecd controller (or Argo CD's) runs it and reports progress in
status.operationState, which these commands follow until it is done.`

const appExample = `  # list the apps of the argocd namespace
  wavecd app list

  # show an app-of-apps root with its children's objects nested
  wavecd app get root

  # sync and wait for the result (exit code 1 when it fails)
  wavecd app sync guestbook --timeout 300`

// appFlags are the flags every `app` command shares.
type appFlags struct {
	namespaceFlags
	// appNamespace is the namespace of the app NAME names (-N, as the argocd
	// CLI's --app-namespace): an app outside the control namespace.
	appNamespace string
}

func newAppCommand(s Streams) *cobra.Command {
	f := &appFlags{}
	cmd := &cobra.Command{
		Use:     "app",
		Aliases: []string{"apps", "application"},
		Short:   "Manage Applications (list, get, sync, wait, create, delete ...)",
		Long:    appLong,
		Example: appExample,
	}
	f.addTo(cmd.PersistentFlags(), "namespace of the Applications")
	cmd.PersistentFlags().StringVarP(&f.appNamespace, "app-namespace", "N", "",
		"namespace of the app NAME names, as NAMESPACE/NAME does (apps in any namespace; default: -n)")
	cmd.AddCommand(
		newAppListCommand(s, f), newAppGetCommand(s, f), newAppHistoryCommand(s, f),
		newAppSyncCommand(s, f), newAppRollbackCommand(s, f), newAppWaitCommand(s, f),
		newAppCreateCommand(s, f), newAppSetCommand(s, f), newAppDeleteCommand(s, f), newAppDiffCommand(s, f),
		newAppTerminateOpCommand(s, f),
	)
	return cmd
}

// client connects to the cluster for the namespace of -n.
func (f *appFlags) client() (*appclient.Client, error) {
	return f.clientIn(f.namespace)
}

func (f *appFlags) clientIn(namespace string) (*appclient.Client, error) {
	k, err := appclient.LoadKubeconfig(appclient.KubeconfigOptions{Path: f.kube.kubeconfig, Context: f.kube.context})
	if err != nil {
		return nil, err
	}
	return appclient.New(k.Config, namespace, k.User)
}

// clientFor splits NAME or NAMESPACE/NAME and connects to that namespace.
func (f *appFlags) clientFor(arg string) (*appclient.Client, string, error) {
	ns, name, qualified := strings.Cut(arg, "/")
	if !qualified {
		ns, name = cmp.Or(f.appNamespace, f.namespace), arg
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, "", fmt.Errorf("invalid application name %q: want NAME or NAMESPACE/NAME", arg)
	}
	c, err := f.clientIn(ns)
	return c, name, err
}
