package appclient

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigOptions select the cluster and the user, like kubectl's flags.
type KubeconfigOptions struct {
	// Path is an explicit kubeconfig file; empty uses KUBECONFIG, then
	// ~/.kube/config, then the in-cluster config.
	Path string
	// Context overrides the kubeconfig's current context.
	Context string
}

// Kubeconfig is a loaded client configuration.
type Kubeconfig struct {
	Config *rest.Config
	// User is the kubeconfig user (AuthInfo) of the context in use, empty
	// for the in-cluster config.
	User string
}

// LoadKubeconfig loads the client configuration the way kubectl does.
func LoadKubeconfig(o KubeconfigOptions) (*Kubeconfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Path
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	name := o.Context
	if name == "" {
		name = raw.CurrentContext
	}
	k := &Kubeconfig{Config: cfg}
	if kctx, ok := raw.Contexts[name]; ok {
		k.User = kctx.AuthInfo
	}
	return k, nil
}
