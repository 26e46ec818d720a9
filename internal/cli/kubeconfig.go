package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
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

// namespaceFlags are the kubeconfig flags and the namespace (-n) that the
// commands of a group (app, cluster, proj) share.
type namespaceFlags struct {
	kube      kubeFlags
	namespace string
}

// addTo adds the flags to fs; usage describes the namespace.
func (f *namespaceFlags) addTo(fs *pflag.FlagSet, usage string) {
	f.kube.addTo(fs)
	fs.StringVarP(&f.namespace, "namespace", "n", appclient.DefaultNamespace, usage)
}

// connect connects to the cluster of the kubeconfig (or --context).
func (f *namespaceFlags) connect() (*rest.Config, client.Client, error) {
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

// appNamespacesEnv is the variable argocd-cmd-params-cm's
// application.namespaces sets in Argo CD's manifests (and in wavecd's).
const appNamespacesEnv = "ARGOCD_APPLICATION_NAMESPACES"

// addAppNamespacesFlag adds --application-namespaces, Argo CD's flag for
// apps in any namespace, defaulting to $ARGOCD_APPLICATION_NAMESPACES;
// what says what the apps of those namespaces are.
func addAppNamespacesFlag(fs *pflag.FlagSet, dst *[]string, what string) {
	fs.StringSliceVar(dst, "application-namespaces", application.ParsePatterns(os.Getenv(appNamespacesEnv)),
		"more namespaces whose Applications are "+what+", comma-separated globs or /regular expressions/ (Argo CD's application.namespaces; default: $"+appNamespacesEnv+")")
}
