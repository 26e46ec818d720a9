package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/auth"
)

func newAdminCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Administer the API server's settings, try notifications, list controller shards",
	}
	cmd.AddCommand(newAdminInitialPasswordCommand(s), newAdminNotificationsCommand(s), newAdminShardsCommand(s))
	return cmd
}

// initialPasswordAction prints the generated admin password.
type initialPasswordAction struct {
	out       io.Writer
	kube      kubeFlags
	namespace string
}

func newAdminInitialPasswordCommand(s Streams) *cobra.Command {
	a := &initialPasswordAction{out: s.Out}
	cmd := &cobra.Command{
		Use:   "initial-password",
		Short: "Print the generated admin password",
		Long: `Print the password "wavecd server" generated for the admin user on its first
start, read from Secret argocd-initial-admin-secret (key password), as
"argocd admin initial-password" does. Change it after the first login and
delete that Secret.`,
		Example: `  wavecd admin initial-password -n argocd`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.Run(cmd.Context()) },
	}
	a.kube.addTo(cmd.Flags())
	cmd.Flags().StringVarP(&a.namespace, "namespace", "n", appclient.DefaultNamespace, "namespace of the API server's settings")
	return cmd
}

// Run prints the password.
func (a *initialPasswordAction) Run(ctx context.Context) error {
	cfg, err := a.kube.restConfig()
	if err != nil {
		return err
	}
	c, err := appclient.New(cfg, a.namespace, "")
	if err != nil {
		return err
	}
	pw, err := (auth.Store{Client: c.Kube, Namespace: a.namespace}).InitialPassword(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.out, pw)
	return nil
}
