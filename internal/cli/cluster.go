package cli

import "github.com/spf13/cobra"

const clusterLong = `Register the clusters Applications deploy to, the way Argo CD stores them: a
Secret labelled argocd.argoproj.io/secret-type: cluster in the controller's
namespace (-n, default argocd) with the keys name, server and config (JSON:
bearerToken, tlsClientConfig). The cluster the controller runs in is always
there as in-cluster (https://kubernetes.default.svc).

The Secrets go to the cluster of your kubeconfig's current context (--context
picks another): the one the wavecd controller runs in.`

func newClusterCommand(s Streams) *cobra.Command {
	f := &namespaceFlags{}
	cmd := &cobra.Command{
		Use:     "cluster",
		Aliases: []string{"clusters"},
		Short:   "Register destination clusters (add, list, rm)",
		Long:    clusterLong,
	}
	f.addTo(cmd.PersistentFlags(), "namespace of the controller and its cluster Secrets")
	cmd.AddCommand(newClusterAddCommand(s, f), newClusterListCommand(s, f), newClusterRmCommand(s, f))
	return cmd
}
