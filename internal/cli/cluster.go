package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/appclient"
)

const clusterLong = `Register the clusters Applications deploy to, the way Argo CD stores them: a
Secret labelled argocd.argoproj.io/secret-type: cluster in the controller's
namespace (-n, default argocd) with the keys name, server and config (JSON:
bearerToken, tlsClientConfig). The cluster the controller runs in is always
there as in-cluster (https://kubernetes.default.svc).

The Secrets go to the cluster of your kubeconfig's current context (--context
picks another): the one the wavecd controller runs in.`

// clusterFlags are the flags every `cluster` command shares.
type clusterFlags struct {
	kube      kubeFlags
	namespace string
}

func newClusterCommand(s Streams) *cobra.Command {
	f := &clusterFlags{}
	cmd := &cobra.Command{
		Use:     "cluster",
		Aliases: []string{"clusters"},
		Short:   "Register destination clusters (add, list, rm)",
		Long:    clusterLong,
	}
	f.kube.addTo(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&f.namespace, "namespace", "n", appclient.DefaultNamespace, "namespace of the controller and its cluster Secrets")
	cmd.AddCommand(newClusterAddCommand(s, f), newClusterListCommand(s, f), newClusterRmCommand(s, f))
	return cmd
}

// home connects to the cluster the controller runs in: the kubeconfig's
// current context, or --context.
func (f *clusterFlags) home() (*rest.Config, client.Client, error) {
	cfg, err := f.kube.restConfig()
	if err != nil {
		return nil, nil, err
	}
	c, err := appclient.New(cfg, f.namespace, "")
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return cfg, c.Kube, nil
}
