package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// awsModule is Karpenter's AWS provider, whose chart (charts/karpenter)
// real repositories install: its CRDs are in pkg/apis/crds/ (the chart's
// crds/ folder links there; the module zip drops the link).
const awsModule = "github.com/aws/karpenter-provider-aws"

// staticNodeConfig: one small static node for Karpenter's own pod, Ready
// without a CNI agent.
const staticNodeConfig = `nodeGroups:
- name: static
  count: 1
  cpu: "1"
  memory: 2Gi
`

var ec2NodeClassGVR = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}

// ec2Manifests are an EC2NodeClass and a NodePool as a user of Karpenter's
// AWS provider writes them (its getting-started guide's).
const ec2Manifests = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-wavecd
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags: {karpenter.sh/discovery: wavecd}
  securityGroupSelectorTerms:
  - tags: {karpenter.sh/discovery: wavecd}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: kubernetes.io/os, operator: In, values: [linux]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
      - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: 720h
  limits: {cpu: 1000}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 10m}
`

// TestKarpenterEC2NodeClass installs Karpenter the way a repository using
// Karpenter's AWS chart does: the chart's CRDs (NodePool, NodeClaim,
// NodeOverlay, CapacityBuffer, EC2NodeClass; no KWOKNodeClass), an
// EC2NodeClass and a NodePool of it. karpenter-kwok serves the
// EC2NodeClass with a KWOKNodeClass of the same name (creating its CRD),
// so the NodePool reads Ready and pending pods get a KWOK node.
func TestKarpenterEC2NodeClass(t *testing.T) {
	buildKarpenter(t)
	awsCRDs := awsKarpenterCRDs(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(staticNodeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", cfg)
	dyn := dynamicFor(t, c.dir)
	createCRDs(t, dyn, awsCRDs, nodePoolGVR, nodeClaimGVR, ec2NodeClassGVR)
	c.mustCreate(t, ec2Manifests)
	startKarpenter(t, c)
	dumpKarpenterLogOnFailure(t, c)

	testEC2Provisioning(t, c, dyn)
	t.Run("the KWOKNodeClass CRD and node class are the bridge's", func(t *testing.T) {
		crd, err := dyn.Resource(crdGVR).Get(t.Context(), "kwoknodeclasses.karpenter.kwok.sh", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("KWOKNodeClass CRD: %v", err)
		}
		t.Logf("KWOKNodeClass CRD created by karpenter-kwok at %s", crd.GetCreationTimestamp())
		kc, err := dyn.Resource(nodeClassGVR).Get(t.Context(), "default", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("KWOKNodeClass default: %v", err)
		}
		owners := kc.GetOwnerReferences()
		if kc.GetLabels()["localcluster.wavecd.io/ec2nodeclass"] != "default" || len(owners) != 1 ||
			owners[0].Kind != "EC2NodeClass" || owners[0].Name != "default" || owners[0].Controller == nil || !*owners[0].Controller {
			t.Errorf("KWOKNodeClass default: labels %v, owners %+v; want labelled and owned by EC2NodeClass default", kc.GetLabels(), owners)
		}
	})
	t.Run("the bridge says once which node class serves the EC2NodeClass", func(t *testing.T) {
		log := karpenterLog(t, c)
		if n := strings.Count(log, "EC2NodeClass default is served by KWOK node class default"); n != 1 {
			t.Errorf("log has the EC2NodeClass line %d times, want once:\n%s", n, log)
		}
		events, err := c.client.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{FieldSelector: "source=localcluster"})
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "EC2NodeClass" && e.InvolvedObject.Name == "default" {
				notes = append(notes, e.Message)
			}
		}
		if len(notes) != 1 || !strings.HasPrefix(notes[0], "served by KWOKNodeClass default") {
			t.Errorf("the cluster's notes on EC2NodeClass default: %q, want one saying a KWOKNodeClass serves it", notes)
		}
	})
}

// dumpKarpenterLogOnFailure logs the karpenter process's log at the end of
// a failed test, while the cluster still runs.
func dumpKarpenterLogOnFailure(t *testing.T, c *localCluster) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		pods, err := c.client.CoreV1().Pods("karpenter").List(context.Background(), metav1.ListOptions{LabelSelector: "app=karpenter"})
		if err != nil || len(pods.Items) == 0 {
			t.Logf("karpenter pods: %v", err)
			return
		}
		p := pods.Items[0]
		t.Logf("karpenter pod %s: phase %s, container statuses %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		b, err := os.ReadFile(filepath.Join(c.dir, "logs", "process-karpenter_"+p.Name+".log"))
		t.Logf("karpenter log (%v):\n%s", err, b)
	})
}

// karpenterLog returns the log of the karpenter pod's process (of all its
// runs) and reports its errors.
func karpenterLog(t *testing.T, c *localCluster) string {
	t.Helper()
	log, err := readKarpenterLog(t, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Logf("karpenter error: %s", line)
		}
	}
	return log
}

func readKarpenterLog(t *testing.T, c *localCluster) (string, error) {
	pods, err := c.client.CoreV1().Pods("karpenter").List(t.Context(), metav1.ListOptions{LabelSelector: "app=karpenter"})
	if err != nil {
		return "", fmt.Errorf("karpenter pods: %w", err)
	}
	if len(pods.Items) != 1 {
		return "", fmt.Errorf("karpenter pods: %d, want 1", len(pods.Items))
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "logs", "process-karpenter_"+pods.Items[0].Name+".log"))
	return string(b), err
}

// TestKarpenterEC2NodeClassCRDLater starts Karpenter where only KWOK's CRDs
// are served, as TestKarpenter does; the EC2NodeClass CRD comes later.
// karpenter-kwok exits when it shows up, its pod restarts it, and the
// restarted process serves the EC2NodeClass.
func TestKarpenterEC2NodeClassCRDLater(t *testing.T) {
	crds := buildKarpenter(t)
	awsCRDs := awsKarpenterCRDs(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(staticNodeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", cfg)
	dyn := dynamicFor(t, c.dir)
	applyCRDs(t, dyn, crds)
	pid := startKarpenter(t, c)
	dumpKarpenterLogOnFailure(t, c)

	// The process is Ready when it starts: wait until it has looked.
	eventually(t, 30*time.Second, "karpenter-kwok seeing no EC2NodeClass CRD", func() (bool, error) {
		log, err := readKarpenterLog(t, c)
		return strings.Contains(log, "EC2NodeClass (karpenter.k8s.aws/v1) is not served"), err
	})
	start := time.Now()
	var ec2CRD []string
	for _, f := range awsCRDs {
		if strings.HasSuffix(f, "/karpenter.k8s.aws_ec2nodeclasses.yaml") {
			ec2CRD = append(ec2CRD, f)
		}
	}
	createCRDs(t, dyn, ec2CRD, ec2NodeClassGVR)
	pods, err := c.client.CoreV1().Pods("karpenter").List(t.Context(), metav1.ListOptions{LabelSelector: "app=karpenter"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("karpenter pods: %v (%v)", pods, err)
	}
	eventually(t, 60*time.Second, "karpenter restarted", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("karpenter").Get(t.Context(), pods.Items[0].Name, metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount > 0, err
	})
	newPID := waitProcessReady(t, c, "karpenter", pods.Items[0].Name, pid)
	t.Logf("karpenter-kwok restarted %s after the EC2NodeClass CRD was created (pid %d -> %d)",
		time.Since(start).Round(100*time.Millisecond), pid, newPID)
	if log := karpenterLog(t, c); !strings.Contains(log, "EC2NodeClass (karpenter.k8s.aws/v1) is served now: exiting") {
		t.Errorf("karpenter's log does not say why it exited:\n%s", log)
	}
	c.mustCreate(t, ec2Manifests)
	testEC2Provisioning(t, c, dyn)
}

// testEC2Provisioning creates 3 pending pods of 1 CPU and checks that
// Karpenter provisions for them through the EC2NodeClass's NodePool, and
// that the EC2NodeClass and the NodePool read Ready.
func testEC2Provisioning(t *testing.T, c *localCluster, dyn dynamic.Interface) {
	t.Helper()
	start := time.Now()
	createDeployment(t, c, "inflate", 3, "1")
	eventually(t, 60*time.Second, "a NodeClaim", func() (bool, error) {
		claims, err := dyn.Resource(nodeClaimGVR).List(t.Context(), metav1.ListOptions{})
		return err == nil && len(claims.Items) > 0, err
	})
	t.Logf("NodeClaim created %s after the Deployment", time.Since(start).Round(100*time.Millisecond))
	eventually(t, 60*time.Second, "a Ready node of a NodeClaim", func() (bool, error) {
		nodes, err := c.client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
		if err != nil {
			return false, err
		}
		for i := range nodes.Items {
			if readyCondition(&nodes.Items[i]).Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d nodes of NodePool default, none Ready", len(nodes.Items))
	})
	t.Logf("node Ready %s after the Deployment", time.Since(start).Round(100*time.Millisecond))
	eventually(t, 90*time.Second, "3 inflate pods Running on Karpenter's nodes", func() (bool, error) {
		return podsRunning(t, c, "app=inflate", 3)
	})
	t.Logf("3 inflate pods Running %s after the Deployment", time.Since(start).Round(100*time.Millisecond))

	claims, err := dyn.Resource(nodeClaimGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onClaimed := map[string]bool{}
	for _, claim := range claims.Items {
		ref, _, _ := unstructured.NestedStringMap(claim.Object, "spec", "nodeClassRef")
		if ref["group"] != "karpenter.k8s.aws" || ref["kind"] != "EC2NodeClass" || ref["name"] != "default" {
			t.Errorf("NodeClaim %s: nodeClassRef %v, want EC2NodeClass default", claim.GetName(), ref)
		}
		nodeName, _, _ := unstructured.NestedString(claim.Object, "status", "nodeName")
		n, err := c.client.CoreV1().Nodes().Get(t.Context(), nodeName, metav1.GetOptions{})
		if err != nil {
			t.Errorf("node %q of NodeClaim %s: %v", nodeName, claim.GetName(), err)
			continue
		}
		onClaimed[n.Name] = true
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" || n.Labels["karpenter.k8s.aws/ec2nodeclass"] != "default" {
			t.Errorf("node %s: annotations %v, labels %v; want a KWOK node of EC2NodeClass default", n.Name, n.Annotations, n.Labels)
		}
	}
	pods, err := c.client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=inflate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !onClaimed[p.Spec.NodeName] {
			t.Errorf("pod %s runs on %q, not on a NodeClaim's node", p.Name, p.Spec.NodeName)
		}
	}

	nc := readyOf(t, dyn, ec2NodeClassGVR, "default")
	if nc["status"] != "True" || nc["reason"] != "ServedByKWOKNodeClass" || !strings.Contains(fmt.Sprint(nc["message"]), "KWOKNodeClass default") {
		t.Errorf("EC2NodeClass default Ready condition %v, want True, served by KWOKNodeClass default", nc)
	}
	pool := readyOf(t, dyn, nodePoolGVR, "default")
	t.Logf("Deployment created at %s; EC2NodeClass default Ready %s since %s (%s: %s); NodePool default Ready %s since %s",
		start.UTC().Format(time.RFC3339Nano), nc["status"], nc["lastTransitionTime"], nc["reason"], nc["message"], pool["status"], pool["lastTransitionTime"])
	if obj, err := dyn.Resource(ec2NodeClassGVR).Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if role, _, _ := unstructured.NestedString(obj.Object, "spec", "role"); role != "KarpenterNodeRole-wavecd" {
		t.Errorf("EC2NodeClass default: spec.role %q after Karpenter ran, want it as written", role)
	}
	if pool["status"] != "True" {
		t.Errorf("NodePool default Ready condition %v, want True", pool)
	}
}

// readyOf returns the Ready condition of a cluster-scoped object.
func readyOf(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) map[string]any {
	t.Helper()
	obj, err := dyn.Resource(gvr).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", gvr.Resource, name, err)
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// awsKarpenterCRDs returns the CRD files of Karpenter's AWS provider at the
// release of the Karpenter core that localcluster/karpenter pins, from the
// module cache (the go command downloads it when missing).
func awsKarpenterCRDs(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	goCmd := func(args ...string) []byte {
		var stderr strings.Builder
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = "../karpenter"
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}
	version := strings.TrimSpace(string(goCmd("list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/karpenter")))
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(goCmd("mod", "download", "-json", awsModule+"@"+version), &mod); err != nil || mod.Dir == "" {
		t.Fatalf("%s@%s: no module directory (%v, %s)", awsModule, version, err, mod.Error)
	}
	files, err := filepath.Glob(filepath.Join(mod.Dir, "pkg", "apis", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s/pkg/apis/crds (%v)", mod.Dir, err)
	}
	found := false
	for _, f := range files {
		found = found || filepath.Base(f) == "karpenter.k8s.aws_ec2nodeclasses.yaml"
	}
	if !found {
		t.Fatalf("%s/pkg/apis/crds has no EC2NodeClass CRD: %v", mod.Dir, files)
	}
	t.Logf("Karpenter AWS provider %s CRDs from %s", version, filepath.Dir(files[0]))
	return files
}

// createCRDs creates the CRDs of files and waits until gvrs are served.
func createCRDs(t *testing.T, dyn dynamic.Interface, files []string, gvrs ...schema.GroupVersionResource) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &obj.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dyn.Resource(crdGVR).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create CRD %s: %v", obj.GetName(), err)
		}
	}
	for _, gvr := range gvrs {
		eventually(t, 30*time.Second, gvr.Resource+" served", func() (bool, error) {
			_, err := dyn.Resource(gvr).List(t.Context(), metav1.ListOptions{})
			return err == nil, err
		})
	}
}
