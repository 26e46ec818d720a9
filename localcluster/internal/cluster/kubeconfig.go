package cluster

import (
	"fmt"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const contextName = "wavecd-local"

// Server is the API server URL for a port.
func Server(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }

// writeKubeconfig writes the admin kubeconfig for the running cluster.
func writeKubeconfig(l Layout, pki PKI, port int) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   Server(port),
		CertificateAuthorityData: pki.CACert,
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: pki.AdminToken}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: "admin"}
	cfg.CurrentContext = contextName
	if err := clientcmd.WriteToFile(*cfg, l.Kubeconfig()); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// restConfig is the admin client configuration.
func restConfig(pki PKI, port int) *rest.Config {
	return &rest.Config{
		Host:            Server(port),
		BearerToken:     pki.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.CACert},
		QPS:             100,
		Burst:           200,
	}
}
