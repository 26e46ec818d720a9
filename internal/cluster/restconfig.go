package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client rates used when the controller's own config sets none, Argo CD's
// defaults.
const (
	defaultQPS   = 50
	defaultBurst = 100
)

// RESTConfig builds the client configuration for the cluster. local is the
// controller's own configuration: the in-cluster destination (see
// IsInCluster) gets a copy of it; every other cluster gets its server URL
// and the Secret's credentials, with local's rate limits.
func (c *Cluster) RESTConfig(local *rest.Config) (*rest.Config, error) {
	if c.IsInCluster() {
		if local == nil {
			return nil, errors.New("in-cluster destination: no local client configuration")
		}
		return rest.CopyConfig(local), nil
	}
	if c.Config.AWSAuthConfig != nil {
		return nil, fmt.Errorf("cluster %s: awsAuthConfig is not supported by wavecd; use execProviderConfig with a credential plugin", c.Server)
	}
	t := c.Config.TLSClientConfig
	cfg := &rest.Config{
		Host:        c.Server,
		BearerToken: c.Config.BearerToken,
		Username:    c.Config.Username,
		Password:    c.Config.Password,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: t.Insecure, ServerName: t.ServerName,
			CertData: slices.Clone(t.CertData), KeyData: slices.Clone(t.KeyData), CAData: slices.Clone(t.CAData),
		},
		DisableCompression: c.Config.DisableCompression,
		QPS:                defaultQPS,
		Burst:              defaultBurst,
	}
	if local != nil && local.QPS != 0 {
		cfg.QPS, cfg.Burst = local.QPS, local.Burst
	}
	if p := c.Config.ProxyURL; p != "" {
		u, err := url.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: proxyUrl %q: %w", c.Server, p, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	if e := c.Config.ExecProviderConfig; e != nil {
		cfg.ExecProvider = execConfig(e)
	}
	return cfg, nil
}

func execConfig(e *ExecProviderConfig) *clientcmdapi.ExecConfig {
	out := &clientcmdapi.ExecConfig{
		Command: e.Command, Args: slices.Clone(e.Args), APIVersion: e.APIVersion, InstallHint: e.InstallHint,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	names := make([]string, 0, len(e.Env))
	for name := range e.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out.Env = append(out.Env, clientcmdapi.ExecEnvVar{Name: name, Value: e.Env[name]})
	}
	return out
}
