package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/appclient"
)

const projLong = `Inspect Argo CD AppProjects through the Kubernetes API, like argocd proj --core.

Commands read AppProject objects with your kubeconfig (--kubeconfig,
$KUBECONFIG or ~/.kube/config; --context picks a context) in the namespace -n
(default argocd).`

// projFlags are the flags every `proj` command shares.
type projFlags struct {
	kube      kubeFlags
	namespace string
}

func newProjCommand(s Streams) *cobra.Command {
	f := &projFlags{}
	cmd := &cobra.Command{
		Use:     "proj",
		Aliases: []string{"project", "projects"},
		Short:   "Inspect AppProjects (sync windows)",
		Long:    projLong,
	}
	f.kube.addTo(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&f.namespace, "namespace", "n", appclient.DefaultNamespace, "namespace of the AppProjects")
	cmd.AddCommand(newProjWindowsCommand(s, f))
	return cmd
}

// reader connects to the cluster.
func (f *projFlags) reader() (client.Reader, error) {
	cfg, err := f.kube.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := appclient.New(cfg, f.namespace, "")
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c.Kube, nil
}
