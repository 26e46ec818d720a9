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
		"--v=1",
	}
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

func schedulerArgs(l Layout) []string {
	return []string{
		"--kubeconfig=" + l.Kubeconfig(),
		"--leader-elect=false",
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

func workloadsArgs(l Layout, agentSelector string) []string {
	args := []string{
		"--kubeconfig=" + l.Kubeconfig(),
		"--processes=" + l.ProcessDefinitions(),
		"--process-dir=" + l.Processes(),
		"--process-log-dir=" + l.LogDir(),
	}
	if agentSelector != "" {
		args = append(args, "--cni-agent-selector="+agentSelector)
	}
	return args
}
