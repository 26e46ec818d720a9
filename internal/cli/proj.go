package cli

import "github.com/spf13/cobra"

const projLong = `Inspect Argo CD AppProjects through the Kubernetes API, like argocd proj --core.

Commands read AppProject objects with your kubeconfig (--kubeconfig,
$KUBECONFIG or ~/.kube/config; --context picks a context) in the namespace -n
(default argocd).`

func newProjCommand(s Streams) *cobra.Command {
	f := &namespaceFlags{}
	cmd := &cobra.Command{
		Use:     "proj",
		Aliases: []string{"project", "projects"},
		Short:   "Inspect AppProjects (sync windows)",
		Long:    projLong,
	}
	f.addTo(cmd.PersistentFlags(), "namespace of the AppProjects")
	cmd.AddCommand(newProjWindowsCommand(s, f))
	return cmd
}
