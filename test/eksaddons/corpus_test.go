package eksaddons

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/rehearsal"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
	"github.com/wavecd/wavecd/internal/testenv"
)

// corpusDir is the repository the scenarios come from, relative to this
// package.
const corpusDir = "../eks-addons"

// scenarioCase is one scenario of the corpus and what it must show.
type scenarioCase struct {
	name string
	want report.Verdict
	// check looks at the run and at the cluster as it was at its end.
	check func(t *testing.T, run report.RunResult, c *clusterState)
}

// TestEKSAddons rehearses the EKS add-ons bootstrap in its four
// scenarios, with the upstream charts served from a local chart mirror
// and the real Tigera operator and Karpenter running as the pods' processes:
// every verdict comes from what those programs do.
func TestEKSAddons(t *testing.T) {
	corpus, bin, mirror := prepare(t)
	var rows []string
	for _, tc := range []scenarioCase{
		{name: "no-gates-static-nodes", want: report.Stalled, check: checkWebhookDeadlock},
		{name: "gated-karpenter-only", want: report.Stalled, check: checkDeadlock},
		{name: "gated-static-group", want: report.Converged, check: checkStaticGroup},
		{name: "no-gates-karpenter-only", want: report.Stalled, check: checkKarpenterOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, state := rehearse(t, corpus, bin, mirror, tc.name, tc.want)
			rows = append(rows, fmt.Sprintf("%-24s %-9s %6.1fs  %s", tc.name, run.Verdict, run.At, state.summary()))
			if run.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", run.Verdict, run.Reason, tc.want)
			}
			tc.check(t, run, state)
		})
	}
	t.Logf("scenario                 verdict     time  what the operators made\n%s", strings.Join(rows, "\n"))
}

// prepare builds the local cluster and the operators and serves the
// chart mirror; it returns the corpus's folder, wavecd-localcluster and
// the mirror.
func prepare(t *testing.T) (corpus, bin string, mirror *chartMirror) {
	t.Helper()
	bin = testenv.LocalClusterBinary(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := testenv.BuildOperators(t.Context(), root, filepath.Dir(bin)); err != nil {
		t.Fatal(err)
	}
	testenv.SilenceClientLogs()
	if corpus, err = filepath.Abs(corpusDir); err != nil {
		t.Fatal(err)
	}
	mirror = newChartMirror(t, corpus)
	t.Logf("chart mirror: %v (versions %v)", mirror.Mirrors, mirror.Versions)
	return corpus, bin, mirror
}

// rehearse runs one scenario once and returns its run and the cluster's
// state at its end.
func rehearse(t *testing.T, corpus, bin string, mirror *chartMirror, scenario string, want report.Verdict) (report.RunResult, *clusterState) {
	t.Helper()
	return rehearseWith(t, corpus, bin, mirror, scenario, want, nil)
}

// rehearseWith is rehearse with during running from the root's apply to
// the run's end.
func rehearseWith(t *testing.T, corpus, bin string, mirror *chartMirror, scenario string, want report.Verdict,
	during func(context.Context, *rest.Config)) (report.RunResult, *clusterState) {
	t.Helper()
	out := &testenv.SyncBuffer{}
	logPath := filepath.Join(t.TempDir(), "controller.log")
	state := &clusterState{}
	r := &rehearsal.Rehearse{
		Out: out, Dir: corpus, Scenario: scenario, Workspace: t.TempDir(), LocalCluster: bin,
		Report: filepath.Join(t.TempDir(), "report.html"), Mirrors: mirror.Mirrors, Timeout: 5 * time.Minute,
		RouteLogs: func(w io.Writer) { testenv.RouteLogsToFile(t, w, logPath) }, During: during,
		Inspect: func(ctx context.Context, _ int, cfg *rest.Config) error {
			return state.read(ctx, cfg)
		},
	}
	start := time.Now()
	rep, err := r.Run(t.Context())
	t.Logf("%s: wall time %s\n%s", scenario, time.Since(start).Round(100*time.Millisecond), out.String())
	if t.Failed() || rep == nil || len(rep.Runs) != 1 {
		b, _ := os.ReadFile(logPath)
		t.Logf("controller log (tail):\n%s", testenv.Tail(string(b), 60))
	}
	if rep == nil || len(rep.Runs) != 1 {
		t.Fatalf("rehearse: %v, no run", err)
	}
	run := rep.Runs[0]
	if (err == nil) != (run.Verdict == report.Converged) {
		t.Errorf("Run() error = %v with verdict %s", err, run.Verdict)
	}
	if _, err := os.Stat(r.Report); err != nil {
		t.Errorf("HTML report: %v", err)
	}
	for _, l := range run.Logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Errorf("process log %s: %v", l, err)
		} else if run.Verdict != want {
			t.Logf("%s (tail):\n%s", filepath.Base(l), testenv.Tail(string(b), 30))
		}
	}
	if run.Verdict != want {
		t.Logf("out of sync at the end: %v", state.outOfSync)
	}
	return run, state
}

// clusterState is what a run left in its cluster.
type clusterState struct {
	nodes, readyNodes int
	nodeClaims        []string
	// workloads are Deployments and DaemonSets: "kind ns/name ready/want".
	workloads map[string]string
	// tigeraStatus maps a TigeraStatus to its Available condition.
	tigeraStatus map[string]string
	// installationReady is the Installation's Ready condition.
	installationReady string
	// processPods are the pods a process ran (container ID process://).
	processPods []string
	// crdLastApplied says the Installation CRD carries a last-applied
	// annotation (client-side apply).
	crdLastApplied bool
	// pdbVersion is the load balancer controller's PDB's API version.
	pdbVersion string
	// nodeClassReady is the EC2NodeClass's Ready condition.
	nodeClassReady string
	// outOfSync are the objects each Application reports OutOfSync.
	outOfSync []string
	// operatorRestarts is the Tigera operator pod's restart count.
	operatorRestarts int64
}

var (
	nodesGVR        = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsGVR         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploymentsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	daemonSetsGVR   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	nodeClaimsGVR   = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	ec2ClassesGVR   = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	tigeraStatusGVR = schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "tigerastatuses"}
	installationGVR = schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "installations"}
	crdsGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	pdbGVR          = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	appsGVR         = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
)

// read fills the state from the cluster; kinds not served yet are empty.
func (s *clusterState) read(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	list := func(gvr schema.GroupVersionResource) []unstructured.Unstructured {
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		return l.Items
	}
	for _, n := range list(nodesGVR) {
		s.nodes++
		if condition(&n, "Ready") == "True" {
			s.readyNodes++
		}
	}
	for _, nc := range list(nodeClaimsGVR) {
		s.nodeClaims = append(s.nodeClaims, nc.GetName())
	}
	s.workloads = map[string]string{}
	for _, kind := range []struct {
		gvr        schema.GroupVersionResource
		ready, all []string
	}{
		{deploymentsGVR, []string{"status", "readyReplicas"}, []string{"spec", "replicas"}},
		{daemonSetsGVR, []string{"status", "numberReady"}, []string{"status", "desiredNumberScheduled"}},
	} {
		for _, w := range list(kind.gvr) {
			ready, _, _ := unstructured.NestedInt64(w.Object, kind.ready...)
			all, _, _ := unstructured.NestedInt64(w.Object, kind.all...)
			s.workloads[w.GetKind()+" "+w.GetNamespace()+"/"+w.GetName()] = fmt.Sprintf("%d/%d", ready, all)
		}
	}
	s.tigeraStatus = map[string]string{}
	for _, ts := range list(tigeraStatusGVR) {
		s.tigeraStatus[ts.GetName()] = condition(&ts, "Available")
	}
	for _, in := range list(installationGVR) {
		s.installationReady = condition(&in, "Ready")
	}
	for _, p := range list(podsGVR) {
		statuses, _, _ := unstructured.NestedSlice(p.Object, "status", "containerStatuses")
		if p.GetNamespace() == "tigera-operator" && len(statuses) > 0 {
			s.operatorRestarts, _, _ = unstructured.NestedInt64(statuses[0].(map[string]any), "restartCount")
		}
		for _, cs := range statuses {
			if id, _ := cs.(map[string]any)["containerID"].(string); strings.HasPrefix(id, "process://") {
				s.processPods = append(s.processPods, p.GetNamespace()+"/"+p.GetName())
				break
			}
		}
	}
	if crd, err := dyn.Resource(crdsGVR).Get(ctx, "installations.operator.tigera.io", metav1.GetOptions{}); err == nil {
		_, s.crdLastApplied = crd.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	}
	if _, err := dyn.Resource(pdbGVR).Namespace("kube-system").Get(ctx, "aws-load-balancer-controller", metav1.GetOptions{}); err == nil {
		s.pdbVersion = "policy/v1"
	}
	for _, nc := range list(ec2ClassesGVR) {
		s.nodeClassReady = condition(&nc, "Ready")
	}
	for _, app := range list(appsGVR) {
		resources, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
		for _, r := range resources {
			m, _ := r.(map[string]any)
			if m["status"] == "OutOfSync" {
				s.outOfSync = append(s.outOfSync, fmt.Sprintf("%s: %v %v/%v", app.GetName(), m["kind"], m["namespace"], m["name"]))
			}
		}
	}
	return nil
}

// condition is the status of obj's condition typ, "" when absent.
func condition(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// operatorMade lists the workloads the Tigera operator created
// (calico-system, calico-apiserver), with their readiness.
func (s *clusterState) operatorMade() []string {
	var out []string
	for k, v := range s.workloads {
		if strings.Contains(k, " calico-system/") || strings.Contains(k, " calico-apiserver/") {
			out = append(out, k+" "+v)
		}
	}
	sort.Strings(out)
	return out
}

// summary is one line of what the operators made and the nodes there were.
func (s *clusterState) summary() string {
	return fmt.Sprintf("nodes %d/%d Ready, NodeClaims %d, TigeraStatus %v; %s",
		s.readyNodes, s.nodes, len(s.nodeClaims), s.tigeraStatus, strings.Join(s.operatorMade(), ", "))
}
