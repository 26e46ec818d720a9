package cli

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/appclient"
)

// kubeFlags are the cluster-access flags shared by commands that talk to
// the Kubernetes API with the user's kubeconfig.
type kubeFlags struct {
	kubeconfig string
	context    string
}

func (f *kubeFlags) addTo(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context to use (default: the current context)")
}

// restConfig loads the client configuration.
func (f *kubeFlags) restConfig() (*rest.Config, error) {
	k, err := appclient.LoadKubeconfig(appclient.KubeconfigOptions{Path: f.kubeconfig, Context: f.context})
	if err != nil {
		return nil, err
	}
	return k.Config, nil
}
