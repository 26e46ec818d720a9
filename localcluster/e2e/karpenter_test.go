package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// karpenterConfig: one small static node, Ready without a CNI agent, and
// CNI mode, so that Karpenter's nodes wait NotReady for calico-node.
const karpenterConfig = `nodeGroups:
- name: static
  count: 1
  cpu: "1"
  memory: 2Gi
  annotations:
    localcluster.wavecd.io/cni-ready: "true"
cni:
  agentSelector: k8s-app=calico-node
`

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nodePoolGVR  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	nodeClassGVR = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// TestKarpenter runs Karpenter's KWOK provider as the process of its
// Deployment's pod on the static node, and lets it provision nodes for a
// Deployment that does not fit.
func TestKarpenter(t *testing.T) {
	crds := buildKarpenter(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfg, []byte(karpenterConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, filepath.Join(dir, "cluster"), "--config", cfg)
	dyn := dynamicFor(t, c.dir)
	applyCRDs(t, dyn, crds)
	createCNIAgent(t, c)
	createNodePool(t, dyn)
	pid := startKarpenter(t, c)

	start := time.Now()
	createDeployment(t, c, "inflate", 3, "1")
	eventually(t, 90*time.Second, "3 inflate pods Running on Karpenter's nodes", func() (bool, error) {
		return podsRunning(t, c, "app=inflate", 3)
	})
	t.Logf("Karpenter provisioned nodes for 3 pending pods (CNI mode) in %s", time.Since(start).Round(100*time.Millisecond))
	claim := assertKarpenterNodes(t, c, dyn)

	t.Run("deleting a NodeClaim deletes its node", func(t *testing.T) { testNodeClaimDeletion(t, c, dyn, claim) })
	t.Run("deleting Karpenter's Deployment stops the process", func(t *testing.T) {
		if err := c.client.AppsV1().Deployments("karpenter").Delete(t.Context(), "karpenter", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "karpenter pod gone", func() (bool, error) { return podsGone(t, c, "karpenter", "app=karpenter") })
		if pidAlive(pid) {
			t.Fatalf("karpenter process %d still runs after its pod is gone", pid)
		}
	})
}

// buildKarpenter builds karpenter-kwok next to the wavecd-localcluster
// binary under test, where the built-in definition finds it, and returns
// the directory of the CRDs. The first build takes minutes.
func buildKarpenter(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	binDir := filepath.Dir(binary)
	start := time.Now()
	out, err := exec.CommandContext(ctx, "../karpenter/build.sh", binDir).CombinedOutput()
	if err != nil {
		t.Fatalf("build karpenter-kwok: %v\n%s", err, out)
	}
	t.Logf("karpenter-kwok built in %s", time.Since(start).Round(100*time.Millisecond))
	return filepath.Join(binDir, "karpenter-crds")
}

func dynamicFor(t *testing.T, dir string) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// applyCRDs creates every CRD in dir and waits until they are served.
func applyCRDs(t *testing.T, dyn dynamic.Interface, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	createCRDs(t, dyn, files, nodePoolGVR, nodeClaimGVR, nodeClassGVR)
}

func createNodePool(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": map[string]any{"name": "default"},
	}}
	pool := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
      - {key: kubernetes.io/os, operator: In, values: [linux]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
  limits: {cpu: "64"}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}
`), &pool.Object); err != nil {
		t.Fatal(err)
	}
	for gvr, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{nodeClassGVR: class, nodePoolGVR: pool} {
		if _, err := dyn.Resource(gvr).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", obj.GetKind(), err)
		}
	}
}

// startKarpenter creates Karpenter's Deployment (cluster-admin) backed by
// the built-in karpenter process and returns the process's pid.
func startKarpenter(t *testing.T, c *localCluster) int {
	t.Helper()
	createNamespace(t, c, "karpenter")
	createServiceAccount(t, c, "karpenter", "karpenter", "cluster-admin")
	d := deployment("karpenter", "karpenter", 1, "100m")
	d.Spec.Template.Annotations = map[string]string{"localcluster.wavecd.io/process": "karpenter"}
	d.Spec.Template.Spec.ServiceAccountName = "karpenter"
	d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "METRICS_PORT", Value: "8080"}} // replaced by a free port
	if _, err := c.client.AppsV1().Deployments("karpenter").Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var name string
	eventually(t, 30*time.Second, "karpenter pod created", func() (bool, error) {
		pods, err := c.client.CoreV1().Pods("karpenter").List(t.Context(), metav1.ListOptions{LabelSelector: "app=karpenter"})
		if err != nil || len(pods.Items) != 1 {
			return false, err
		}
		name = pods.Items[0].Name
		return true, nil
	})
	pid := waitProcessReady(t, c, "karpenter", name, 0)
	p, err := c.client.CoreV1().Pods("karpenter").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "static-0" {
		t.Fatalf("karpenter runs on %q, want the static node", p.Spec.NodeName)
	}
	return pid
}

func deployment(ns, name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: name,
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			},
		},
	}
}

func createDeployment(t *testing.T, c *localCluster, name string, replicas int32, cpu string) {
	t.Helper()
	if _, err := c.client.AppsV1().Deployments("default").Create(t.Context(), deployment("default", name, replicas, cpu),
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func podsRunning(t *testing.T, c *localCluster, selector string, want int) (bool, error) {
	pods, err := c.client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return false, err
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	return running >= want, fmt.Errorf("%d of %d pods running", running, len(pods.Items))
}

func podsGone(t *testing.T, c *localCluster, ns, selector string) (bool, error) {
	pods, err := c.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	return err == nil && len(pods.Items) == 0, err
}

// assertKarpenterNodes checks that the inflate pods run on NodeClaims'
// nodes, each a KWOK node made Ready by its CNI agent, and returns one
// NodeClaim.
func assertKarpenterNodes(t *testing.T, c *localCluster, dyn dynamic.Interface) *unstructured.Unstructured {
	t.Helper()
	claims, err := dyn.Resource(nodeClaimGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(claims.Items) == 0 {
		t.Fatalf("no NodeClaims (%v)", err)
	}
	claimed := map[string]bool{}
	for _, claim := range claims.Items {
		nodeName, _, _ := unstructured.NestedString(claim.Object, "status", "nodeName")
		n, err := c.client.CoreV1().Nodes().Get(t.Context(), nodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("node %q of NodeClaim %s: %v", nodeName, claim.GetName(), err)
		}
		claimed[n.Name] = true
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" || n.Annotations["localcluster.wavecd.io/cni-ready"] != "true" ||
			readyCondition(n).Status != corev1.ConditionTrue {
			t.Errorf("node %s: annotations %v, Ready %+v; want a KWOK node made Ready by its CNI agent",
				n.Name, n.Annotations, readyCondition(n))
		}
	}
	pods, err := c.client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "app=inflate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !claimed[p.Spec.NodeName] {
			t.Errorf("pod %s runs on %q, not on a NodeClaim's node", p.Name, p.Spec.NodeName)
		}
	}
	return &claims.Items[0]
}

func testNodeClaimDeletion(t *testing.T, c *localCluster, dyn dynamic.Interface, claim *unstructured.Unstructured) {
	ctx := t.Context()
	nodeName, _, _ := unstructured.NestedString(claim.Object, "status", "nodeName")
	start := time.Now()
	if err := dyn.Resource(nodeClaimGVR).Delete(ctx, claim.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "NodeClaim "+claim.GetName()+" and node "+nodeName+" gone", func() (bool, error) {
		_, nodeErr := c.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		_, claimErr := dyn.Resource(nodeClaimGVR).Get(ctx, claim.GetName(), metav1.GetOptions{})
		return apierrors.IsNotFound(nodeErr) && apierrors.IsNotFound(claimErr), fmt.Errorf("node: %w; nodeclaim: %w", nodeErr, claimErr)
	})
	t.Logf("NodeClaim and node gone %s after the delete", time.Since(start).Round(100*time.Millisecond))
	eventually(t, 90*time.Second, "inflate back to 3 Running pods", func() (bool, error) {
		return podsRunning(t, c, "app=inflate", 3)
	})
}
