package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestRenderReadsClusterCapabilities: with --kubeconfig a chart sees the
// cluster's Kubernetes version and every API version it serves: a CRD
// installed since makes the chart render the resource it gates on it;
// --api-versions still wins over the cluster's.
func TestRenderReadsClusterCapabilities(t *testing.T) {
	env := testenv.Get(t)
	c, err := kube.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	version, err := c.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	renderCaps := func(extra ...string) string {
		t.Helper()
		args := append([]string{"render", "--repo", filepath.Join("testdata", "render", "caps"), "--path", ".",
			"--kubeconfig", env.Kubeconfig, "--cache-dir", t.TempDir()}, extra...)
		out, stderr, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("render: %v\n%s", err, stderr)
		}
		return out
	}
	out := renderCaps()
	for _, want := range []string{"kubeVersion: " + version, `atLeast121: "true"`, "apiVersion: policy/v1\nkind: PodDisruptionBudget"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kind: Widget") {
		t.Fatalf("a Widget rendered before its CRD exists:\n%s", out)
	}

	crds := env.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := testenv.CRD("example.com", "Widget", nil)
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(t.Context(), crd.GetName(), metav1.DeleteOptions{}) })
	if err := env.WaitEstablished(t.Context(), []string{crd.GetName()}, time.Minute); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the Widget to render once its CRD is served", func() bool {
		return strings.Contains(renderCaps(), "kind: Widget")
	})
	if out := renderCaps("--api-versions", "policy/v1beta1/PodDisruptionBudget"); strings.Contains(out, "kind: Widget") ||
		!strings.Contains(out, "apiVersion: policy/v1beta1") {
		t.Errorf("--api-versions did not replace the cluster's:\n%s", out)
	}
}
