package cluster

import (
	"strconv"
)

const (
	serviceCIDR = "10.96.0.0/16"
	serviceIP   = "10.96.0.1"
	podCIDR     = "10.244.0.0/16"
	// NodeAnnotation marks the nodes KWOK manages.
	NodeAnnotation = "kwok.x-k8s.io/node"
)

func apiServerArgs(l Layout, p Ports) []string {
	return []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(p.EtcdClient),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer),
		"--tls-cert-file=" + l.PKI("apiserver.crt"),
		"--tls-private-key-file=" + l.PKI("apiserver.key"),
		"--client-ca-file=" + l.PKI("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.PKI("sa.pub"),
		"--service-account-signing-key-file=" + l.PKI("sa.key"),
		"--token-auth-file=" + l.PKI("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		"--profiling=false",
		"--enable-priority-and-fairness=false",
		"--event-ttl=1h",
		// Webhooks and aggregated APIs reach a ready endpoint of their
		// Service through the egress proxy (package network).
		"--enable-aggregator-routing=true",
		"--egress-selector-config-file=" + l.EgressConfig(),
		"--v=1",
	}
}

// apiServerEnv makes the cluster's CA the API server's system roots: the
// ones it verifies a webhook or APIService without a caBundle against.
func apiServerEnv(l Layout) []string { return []string{"SSL_CERT_FILE=" + l.PKI("ca.crt")} }

// egressConfig sends the API server's connections to the cluster's
// network to the egress proxy, over TLS (which the API server requires of
// a TCP proxy; the proxy asks for no client certificate).
func egressConfig(l Layout, p Ports) string {
	return `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      tcp:
        url: https://127.0.0.1:` + strconv.Itoa(p.Egress) + `
        tlsConfig:
          caBundle: ` + strconv.Quote(l.PKI("ca.crt")) + `
          clientCert: ` + strconv.Quote(l.PKI("apiserver.crt")) + `
          clientKey: ` + strconv.Quote(l.PKI("apiserver.key")) + `
`
}

func controllerManagerArgs(l Layout) []string {
	return []string{
		"--kubeconfig=" + l.Kubeconfig(),
		"--leader-elect=false",
		"--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller",
		"--service-account-private-key-file=" + l.PKI("sa.key"),
		"--root-ca-file=" + l.PKI("ca.crt"),
		"--cluster-cidr=" + podCIDR,
		"--secure-port=0",
		"--profiling=false",
		"--v=1",
	}
}

// schedulerArgs start the scheduler from its configuration file (which
// holds the kubeconfig and turns leader election off).
func schedulerArgs(l Layout) []string {
	return []string{
		"--config=" + l.SchedulerConfig(),
		"--secure-port=0",
		"--profiling=false",
		"--v=1",
	}
}

func kwokArgs(l Layout) []string {
	return []string{
		"--kubeconfig=" + l.Kubeconfig(),
		"--config=" + l.KWOKConfig(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + NodeAnnotation + "=fake",
		"--cidr=10.244.0.1/16",
		"--node-ip=" + fallbackNodeIP,
		"--node-lease-duration-seconds=40",
	}
}

func workloadsArgs(l Layout, p Ports, agentSelector string) []string {
	args := []string{
		"--kubeconfig=" + l.Kubeconfig(),
		"--processes=" + l.ProcessDefinitions(),
		"--process-dir=" + l.Processes(),
		"--process-log-dir=" + l.LogDir(),
		"--simulation=" + l.Simulation(),
		"--egress-listen=127.0.0.1:" + strconv.Itoa(p.Egress),
		"--ca-cert=" + l.PKI("ca.crt"),
		"--ca-key=" + l.PKI("ca.key"),
	}
	if agentSelector != "" {
		args = append(args, "--cni-agent-selector="+agentSelector)
	}
	return args
}
