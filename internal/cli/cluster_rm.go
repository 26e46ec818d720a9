package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/cluster"
)

func newClusterRmCommand(s Streams, f *namespaceFlags) *cobra.Command {
	a := &clusterRm{}
	cmd := &cobra.Command{
		Use:     "rm SERVER|NAME",
		Aliases: []string{"remove", "delete"},
		Short:   "Unregister a cluster",
		Long: `Remove a cluster's Secret: Applications deploying there get an
InvalidSpecError, and ApplicationSets stop generating apps for it.

--cleanup also removes wavecd-manager from the cluster, with the credentials
of the Secret: the ClusterRole wavecd-manager-role is deleted and the
cluster's garbage collector deletes the binding, the ServiceAccount and its
token, which it owns.`,
		Example: `  wavecd cluster rm staging
  wavecd cluster rm https://10.0.0.12:6443 --cleanup`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, home, err := f.connect()
			if err != nil {
				return err
			}
			a.Home, a.Local, a.Namespace, a.Cluster = home, cfg, f.namespace, args[0]
			res, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			return printClusterRemoved(s.Out, res)
		},
	}
	cmd.Flags().BoolVar(&a.Cleanup, "cleanup", false, "also remove wavecd-manager (ServiceAccount, ClusterRole, binding, token) from the cluster")
	return cmd
}

// clusterRm unregisters a cluster.
type clusterRm struct {
	Home      client.Client
	Local     *rest.Config
	Namespace string
	// Cluster is a server URL or a cluster name.
	Cluster string
	Cleanup bool
}

// clusterRemoved is what Run did.
type clusterRemoved struct {
	Name, Server string
	// CleanedUp says wavecd-manager was removed; CleanupNote says why not.
	CleanedUp   bool
	CleanupNote string
}

// Run deletes the Secret, after the cleanup when asked: the Secret holds
// the credentials the cleanup uses.
func (a *clusterRm) Run(ctx context.Context) (*clusterRemoved, error) {
	reg := cluster.Registry{Reader: a.Home, Namespace: a.Namespace}
	var c *cluster.Cluster
	var err error
	if strings.Contains(a.Cluster, "://") {
		c, err = reg.ByServer(ctx, a.Cluster)
	} else {
		c, err = reg.ByName(ctx, a.Cluster)
	}
	if err != nil {
		return nil, err
	}
	if c.SecretName == "" {
		return nil, fmt.Errorf("cluster %s is the implicit in-cluster destination: it has no Secret to remove", a.Cluster)
	}
	res := &clusterRemoved{Name: c.Name, Server: c.Server}
	if a.Cleanup {
		if err := a.cleanup(ctx, c); errors.Is(err, errNoManager) {
			res.CleanupNote = err.Error()
		} else if err != nil {
			return nil, fmt.Errorf("clean up %s (the Secret is kept): %w", c.Server, err)
		} else {
			res.CleanedUp = true
		}
	}
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = a.Namespace, c.SecretName
	if err := a.Home.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("delete cluster Secret %s/%s: %w", a.Namespace, c.SecretName, err)
	}
	return res, nil
}

func (a *clusterRm) cleanup(ctx context.Context, c *cluster.Cluster) error {
	cfg, err := c.RESTConfig(a.Local)
	if err != nil {
		return err
	}
	target, err := newManager(cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return target.remove(ctx)
}

func printClusterRemoved(w io.Writer, res *clusterRemoved) error {
	fmt.Fprintf(w, "Cluster '%s' (%s) removed\n", res.Server, res.Name)
	switch {
	case res.CleanedUp:
		fmt.Fprintf(w, "Removed %s from the cluster: its garbage collector deletes the ServiceAccount kube-system/%s, the binding and the token\n", managerRole, managerName)
	case res.CleanupNote != "":
		fmt.Fprintf(w, "Cleanup: %s\n", res.CleanupNote)
	}
	return nil
}
