package rehearsal

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/notify/notifytest"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
	"github.com/wavecd/wavecd/internal/rehearsal/scenario"
	"github.com/wavecd/wavecd/internal/rehearsal/timeline"
	"github.com/wavecd/wavecd/internal/testenv"
)

// calicoKarpenter is the example the rehearse scenarios come from,
// relative to this package.
const calicoKarpenter = "../../examples/calico-karpenter"

var nodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// TestRehearseCalicoKarpenter runs three scenarios of the Calico/Karpenter
// example with the real Karpenter: the health-gated bootstrap deadlocks and
// says why, the static node group fixes it, and without app health it
// converges. Each run's cluster is inspected before it stops.
func TestRehearseCalicoKarpenter(t *testing.T) {
	bin := testenv.LocalClusterBinary(t)
	buildKarpenter(t, filepath.Dir(bin))
	testenv.SilenceClientLogs()
	dir, err := filepath.Abs(calicoKarpenter)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scenario string
		want     report.Verdict
		inspect  func(t *testing.T, c clusterState)
		verdict  func(t *testing.T, run report.RunResult)
		// notified checks the notifications the run sent, to a webhook
		// subscribed to every trigger of the catalog.
		notified func(t *testing.T, rcv *notifytest.Receiver)
	}{
		{scenario: "health-gated", want: report.Stalled, inspect: inspectDeadlock, verdict: checkDeadlockVerdict, notified: checkStallNotified},
		{scenario: "static-nodes", want: report.Converged, inspect: inspectStaticNodes},
		{scenario: "no-health", want: report.Converged, inspect: inspectKarpenterNodes},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			out := &testenv.SyncBuffer{}
			logPath := filepath.Join(t.TempDir(), "controller.log")
			dir := dir
			var rcv *notifytest.Receiver
			if tc.notified != nil {
				dir, rcv = withStallNotifications(t, dir, tc.scenario)
			}
			r := &Rehearse{
				Out: out, Dir: dir, Scenario: tc.scenario, Workspace: t.TempDir(), LocalCluster: bin,
				Report:    filepath.Join(t.TempDir(), "report.html"),
				RouteLogs: func(w io.Writer) { testenv.RouteLogsToFile(t, w, logPath) },
				Inspect: func(ctx context.Context, _ int, cfg *rest.Config) error {
					tc.inspect(t, newClusterState(t, ctx, cfg))
					return nil
				},
			}
			start := time.Now()
			rep, err := r.Run(t.Context())
			t.Logf("%s: wall time %s\n%s", tc.scenario, time.Since(start).Round(100*time.Millisecond), out.String())
			if t.Failed() {
				b, _ := os.ReadFile(logPath)
				t.Logf("controller log (tail):\n%s", testenv.Tail(string(b), 40))
			}
			if rep == nil || len(rep.Runs) != 1 {
				t.Fatalf("rehearse: %v, no run", err)
			}
			run := rep.Runs[0]
			if run.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s; error %v", run.Verdict, run.Reason, tc.want, err)
			}
			if (err == nil) != (tc.want == report.Converged) {
				t.Errorf("Run() error = %v with verdict %s", err, run.Verdict)
			}
			if tc.verdict != nil {
				tc.verdict(t, run)
			}
			if tc.notified != nil {
				tc.notified(t, rcv)
			}
			if took := time.Since(start); took > 2*time.Minute {
				t.Errorf("scenario took %s, want under 2 minutes", took.Round(time.Second))
			}
			if _, err := os.Stat(r.Report); err != nil {
				t.Errorf("HTML report: %v", err)
			}
			assertNoProcessIn(t, r.Workspace)
		})
	}
}

// withStallNotifications copies the example and adds, to the scenario's
// settings, Argo CD's notification settings: a webhook to a receiver the
// test starts, subscribed to on-stalled for every app.
func withStallNotifications(t *testing.T, src, name string) (string, *notifytest.Receiver) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	rcv := notifytest.NewReceiver(t)
	settings := filepath.Join(dir, s.Settings)
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, []byte(strings.ReplaceAll(`
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
  namespace: argocd
data:
  service.webhook.stalls: |
    url: RECEIVER/stalls
  subscriptions: |
    - recipients: [stalls]
      triggers: [on-stalled]
`, "RECEIVER", rcv.URL))...)
	if err := os.WriteFile(settings, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, rcv
}

// checkStallNotified: one on-stalled, from calico (whose operator cannot
// be scheduled; root waits on it and says nothing more), naming the wave,
// the scheduler's reason and where Karpenter sits.
func checkStallNotified(t *testing.T, rcv *notifytest.Receiver) {
	reqs := rcv.Requests()
	if len(reqs) != 1 {
		var bodies []string
		for _, q := range reqs {
			bodies = append(bodies, string(q.Body))
		}
		t.Fatalf("%d notifications, want one on-stalled: %q", len(reqs), bodies)
	}
	body := string(reqs[0].Body)
	for _, want := range []string{
		"Application calico is stalled in wave 0: it waits on Deployment calico-system/tigera-operator, and pod tigera-operator-",
		"cannot be scheduled: 0/1 nodes are available",
		"Node provisioners: no node provisioner is running; karpenter is in wave 1 of root.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("on-stalled message %q lacks %q", body, want)
		}
	}
}

// assertNoProcessIn checks that no process runs from dir (the run's
// cluster stopped with its run).
func assertNoProcessIn(t *testing.T, dir string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			t.Errorf("process %s still runs after the rehearsal: %s", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// checkDeadlockVerdict checks the verdict of the health-gated run: stalled,
// naming the blocked wave, the unschedulable pod and the provisioner's wave.
func checkDeadlockVerdict(t *testing.T, run report.RunResult) {
	const wantPrefix = "wave 0 of calico waits on Deployment calico-system/tigera-operator: pod tigera-operator-"
	const wantSuffix = "; no node provisioner is running; karpenter is in wave 1 of root"
	if !strings.HasPrefix(run.Reason, wantPrefix) || !strings.HasSuffix(run.Reason, wantSuffix) || !strings.Contains(run.Reason, " Pending: 0/1 nodes are available") {
		t.Errorf("reason = %q, want %q... Pending: 0/1 nodes are available...%q", run.Reason, wantPrefix, wantSuffix)
	}
	stalled := map[string]string{}
	for _, s := range run.StalledApps {
		stalled[s.App] = s.Message
	}
	if !strings.HasPrefix(stalled["root"], "wave 0 of root waits on Application calico: Deployment calico-system/tigera-operator") {
		t.Errorf("stalled apps %v, want root stalled on calico's operator", stalled)
	}
	var karpenter *report.AppRecord
	for i := range run.Apps {
		if run.Apps[i].Name == "karpenter" {
			karpenter = &run.Apps[i]
		}
	}
	if karpenter == nil || karpenter.Created >= 0 || karpenter.Wave != 1 {
		t.Errorf("karpenter in the report: %+v, want in wave 1, never created", karpenter)
	}
}

// clusterState reads a run's cluster.
type clusterState struct {
	ctx  context.Context
	kube kubernetes.Interface
	dyn  dynamic.Interface
	apps map[string]*v1alpha1.Application
}

func newClusterState(t *testing.T, ctx context.Context, cfg *rest.Config) clusterState {
	t.Helper()
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	list := &v1alpha1.ApplicationList{}
	if err := c.List(ctx, list, client.InNamespace(Namespace)); err != nil {
		t.Fatal(err)
	}
	s := clusterState{ctx: ctx, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), apps: map[string]*v1alpha1.Application{}}
	for i := range list.Items {
		s.apps[list.Items[i].Name] = &list.Items[i]
	}
	return s
}

func (s clusterState) condition(app, typ string) string {
	a := s.apps[app]
	if a == nil {
		return ""
	}
	for _, c := range a.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

func (s clusterState) nodeClaims(t *testing.T) int {
	t.Helper()
	list, err := s.dyn.Resource(nodeClaimGVR).List(s.ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return 0 // Karpenter's CRDs were never installed
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func (s clusterState) pods(t *testing.T, ns, selector string) []corev1.Pod {
	t.Helper()
	list, err := s.kube.CoreV1().Pods(ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func (s clusterState) nodes(t *testing.T) map[string]*corev1.Node {
	t.Helper()
	list, err := s.kube.CoreV1().Nodes().List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Node{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// inspectDeadlock: calico's and the root's syncs are Running and carry the
// SyncStalled condition, karpenter was never created, no NodeClaim exists
// and the operator's pod is Pending because the scheduler cannot place it.
func inspectDeadlock(t *testing.T, c clusterState) {
	calico := c.apps["calico"]
	if calico == nil || calico.Status.OperationState == nil {
		t.Fatalf("calico: %v, want an app with a sync", calico)
	}
	op := calico.Status.OperationState
	stalled := c.condition("calico", v1alpha1.ApplicationConditionSyncStalled)
	if op.Phase != v1alpha1.OperationRunning || !strings.HasPrefix(op.Message, "stalled: wave 0 of calico waits on Deployment calico-system/tigera-operator") {
		t.Errorf("calico's operation: %s %q, want Running and stalled in wave 0", op.Phase, op.Message)
	}
	if stalled != op.Message {
		t.Errorf("calico's SyncStalled condition = %q, want the operation's message %q", stalled, op.Message)
	}
	if root := c.condition("root", v1alpha1.ApplicationConditionSyncStalled); !strings.Contains(root, "wave 0 of root waits on Application calico") ||
		!strings.HasSuffix(root, "karpenter is in wave 1 of root") {
		t.Errorf("root's SyncStalled condition = %q", root)
	}
	if _, ok := c.apps["karpenter"]; ok {
		t.Error("the karpenter Application exists; want it never created")
	}
	if n := c.nodeClaims(t); n != 0 {
		t.Errorf("%d NodeClaims, want none", n)
	}
	pods := c.pods(t, "calico-system", "k8s-app=tigera-operator")
	if len(pods) != 1 || timeline.Unschedulable(&pods[0]) == "" {
		t.Errorf("tigera-operator pods %d, want 1 that cannot be scheduled", len(pods))
	}
	if nodes := c.nodes(t); len(nodes) != 1 || nodes["fargate-0"] == nil {
		t.Errorf("nodes %v, want only fargate-0", keys(nodes))
	}
}

// inspectStaticNodes: every app Synced and Healthy, calico-node on both
// static nodes, Karpenter on the Fargate node, and no NodeClaim.
func inspectStaticNodes(t *testing.T, c clusterState) {
	checkAllHealthy(t, c, "root", "calico", "karpenter")
	if n := c.nodeClaims(t); n != 0 {
		t.Errorf("%d NodeClaims, want none: the static nodes are enough", n)
	}
	for _, p := range c.pods(t, "calico-system", "k8s-app=calico-node") {
		if !strings.HasPrefix(p.Spec.NodeName, "system-") || !timeline.PodReady(&p) {
			t.Errorf("calico-node pod %s on %q, ready %v; want Ready on a static node", p.Name, p.Spec.NodeName, timeline.PodReady(&p))
		}
	}
	for _, p := range c.pods(t, "karpenter", "app.kubernetes.io/name=karpenter") {
		if p.Spec.NodeName != "fargate-0" || !timeline.PodReady(&p) {
			t.Errorf("karpenter pod %s on %q, want Ready on fargate-0", p.Name, p.Spec.NodeName)
		}
	}
}

// inspectKarpenterNodes: every app Synced and Healthy, and Calico's operator
// runs on a node Karpenter made, Ready because calico-node runs there.
func inspectKarpenterNodes(t *testing.T, c clusterState) {
	checkAllHealthy(t, c, "root", "calico", "karpenter")
	if n := c.nodeClaims(t); n < 1 {
		t.Errorf("%d NodeClaims, want Karpenter to have made a node", n)
	}
	nodes := c.nodes(t)
	for _, p := range c.pods(t, "calico-system", "k8s-app=tigera-operator") {
		n := nodes[p.Spec.NodeName]
		if n == nil || n.Labels["karpenter.sh/nodepool"] != "default" || !timeline.NodeReady(n) {
			t.Errorf("tigera-operator on %q, want a Ready node of Karpenter's NodePool", p.Spec.NodeName)
		}
	}
}

func checkAllHealthy(t *testing.T, c clusterState, names ...string) {
	t.Helper()
	for _, name := range names {
		a := c.apps[name]
		switch {
		case a == nil:
			t.Errorf("%s: missing", name)
		case a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Health.Status != "Healthy" || a.Operation != nil:
			t.Errorf("%s: %s %s, operation %v; want Synced Healthy", name, a.Status.Sync.Status, a.Status.Health.Status, a.Operation)
		case c.condition(name, v1alpha1.ApplicationConditionSyncStalled) != "":
			t.Errorf("%s still carries SyncStalled", name)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// buildKarpenter builds karpenter-kwok and copies Karpenter's CRDs into
// binDir when either is missing. A cold build takes minutes.
func buildKarpenter(t *testing.T, binDir string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	if err := testenv.BuildKarpenter(ctx, root, binDir); err != nil {
		t.Fatal(err)
	}
	t.Logf("karpenter-kwok ready in %s in %s", binDir, time.Since(start).Round(100*time.Millisecond))
}
