package eksaddons

import (
	"slices"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// checkCalicoUp: the Tigera operator, run as the pod's process, made
// calico-node (Running on every node a CNI must serve), typha and
// kube-controllers, and says so in TigeraStatus and the Installation.
func checkCalicoUp(t *testing.T, run report.RunResult, c *clusterState) {
	t.Helper()
	if !slices.ContainsFunc(c.processPods, func(p string) bool { return strings.HasPrefix(p, "tigera-operator/tigera-operator-") }) {
		t.Errorf("no tigera-operator pod ran as a process: %v", c.processPods)
	}
	for _, w := range []string{"DaemonSet calico-system/calico-node", "Deployment calico-system/calico-typha", "Deployment calico-system/calico-kube-controllers"} {
		ready, ok := c.workloads[w]
		if !ok || strings.HasPrefix(ready, "0/") {
			t.Errorf("%s: %q, want made by the operator and ready", w, ready)
		}
	}
	if c.tigeraStatus["calico"] != "True" || c.installationReady != "True" {
		t.Errorf("TigeraStatus %v, Installation Ready %q; want calico Available and the Installation Ready", c.tigeraStatus, c.installationReady)
	}
	if c.readyNodes != c.nodes {
		t.Errorf("%d of %d nodes Ready", c.readyNodes, c.nodes)
	}
	timeline := strings.Join(run.Timeline, "\n")
	for _, want := range []string{"runs as process tigera-operator", "asks for tigera-operator v1.34.13; this cluster runs tigera-operator v1.35.0"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	if !slices.ContainsFunc(run.Logs, func(l string) bool { return strings.Contains(l, "process-tigera-operator_tigera-operator-") }) {
		t.Errorf("the run kept no log of the operator's process: %v", run.Logs)
	}
}

// checkAddonsSynced: what the upstream charts needed of the engine: the
// Installation CRD (1.3 MB) applied server-side, a PodDisruptionBudget
// rendered for the API the cluster serves, Karpenter's EC2NodeClass served.
func checkAddonsSynced(t *testing.T, run report.RunResult, c *clusterState) {
	t.Helper()
	if c.crdLastApplied {
		t.Error("the Installation CRD carries a last-applied annotation: it was applied client-side")
	}
	if c.pdbVersion != "policy/v1" {
		t.Error("the load balancer controller's PodDisruptionBudget is not policy/v1")
	}
	if c.nodeClassReady != "True" {
		t.Errorf("EC2NodeClass Ready %q, want True (served by a KWOK node class)", c.nodeClassReady)
	}
	if !slices.ContainsFunc(c.processPods, func(p string) bool { return strings.HasPrefix(p, "karpenter/karpenter-") }) {
		t.Errorf("no karpenter pod ran as a process: %v", c.processPods)
	}
	if !strings.Contains(strings.Join(run.Timeline, "\n"), "ec2nodeclass default: served by KWOKNodeClass default") {
		t.Error("the timeline does not say which node class serves the EC2NodeClass")
	}
}

// checkStaticGroup: with a node for Calico before Karpenter exists, and
// the load balancer controller's webhooks registered after the operator
// made its Services, everything comes up.
func checkStaticGroup(t *testing.T, run report.RunResult, c *clusterState) {
	checkCalicoUp(t, run, c)
	checkAddonsSynced(t, run, c)
}

// checkWebhookDeadlock: the load balancer controller's Service webhook
// refuses the Services the Tigera operator creates, before calico-node
// exists; the operator's status names it, and the rehearsal prints it.
func checkWebhookDeadlock(t *testing.T, run report.RunResult, c *clusterState) {
	t.Helper()
	checkOperatorRefused(t, run, c, 0)
}

// checkOperatorRefused is checkWebhookDeadlock with ready nodes Ready (the
// ones no CNI is needed for: Fargate's).
func checkOperatorRefused(t *testing.T, run report.RunResult, c *clusterState, ready int) {
	t.Helper()
	if !slices.ContainsFunc(run.Operators, func(r string) bool {
		return strings.HasPrefix(r, "Installation default (calico): Degraded=True") && strings.Contains(r, `failed calling webhook "mservice.elbv2.k8s.aws"`)
	}) {
		t.Errorf("operator reports %q, want the Installation Degraded by the mservice.elbv2.k8s.aws webhook", run.Operators)
	}
	if _, made := c.workloads["DaemonSet calico-system/calico-node"]; made || c.readyNodes != ready {
		t.Errorf("calico-node made %v, %d nodes Ready; want none and %d: the operator never got past typha's Service", made, c.readyNodes, ready)
	}
	if !slices.ContainsFunc(run.Waiting, func(w string) bool {
		return strings.HasPrefix(w, "aws-load-balancer-controller:") && strings.Contains(w, "no ready endpoint")
	}) {
		t.Errorf("waiting %q, want the load balancer controller waiting on its own webhook's endpoints", run.Waiting)
	}
	// The Installation's health check says what the operator says.
	if !slices.ContainsFunc(run.Waiting, func(w string) bool {
		return strings.HasPrefix(w, "calico:") && strings.Contains(w, "Installation default") && strings.Contains(w, "mservice.elbv2.k8s.aws")
	}) {
		t.Errorf("waiting %q, want calico waiting on its Installation, refused by the mservice.elbv2.k8s.aws webhook", run.Waiting)
	}
	if !slices.ContainsFunc(c.processPods, func(p string) bool { return strings.HasPrefix(p, "tigera-operator/tigera-operator-") }) {
		t.Errorf("no tigera-operator pod ran as a process: %v", c.processPods)
	}
	// calico's chart has a Helm pre-delete hook: its controller adds the
	// deletion-hook finalizers, which the root does not take for drift.
	if slices.ContainsFunc(c.outOfSync, func(o string) bool { return strings.HasPrefix(o, "eks-addons:") }) {
		t.Errorf("the root reports its Applications out of sync: %v", c.outOfSync)
	}
}

// checkKarpenterOnly: Karpenter made the nodes, and the same webhook
// deadlock holds them NotReady.
func checkKarpenterOnly(t *testing.T, run report.RunResult, c *clusterState) {
	checkOperatorRefused(t, run, c, 2)
	if len(c.nodeClaims) == 0 || c.nodes <= 2 {
		t.Errorf("NodeClaims %v, %d nodes: with Fargate only, Karpenter must have made the nodes", c.nodeClaims, c.nodes)
	}
}

// checkDeadlock: the Tigera operator cannot schedule on Fargate, so calico
// never turns Healthy and the root never creates karpenter; the verdict
// names the cause.
func checkDeadlock(t *testing.T, run report.RunResult, c *clusterState) {
	for _, want := range []string{"tigera-operator", "karpenter is in wave 1"} {
		if !strings.Contains(run.Reason, want) {
			t.Errorf("reason %q does not name %q", run.Reason, want)
		}
	}
	if len(c.nodeClaims) != 0 || len(c.operatorMade()) != 0 {
		t.Errorf("NodeClaims %v, operator's workloads %v; want none in a deadlock", c.nodeClaims, c.operatorMade())
	}
}
