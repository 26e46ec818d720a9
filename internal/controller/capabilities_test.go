package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/testenv"
)

// gadgetCRD defines Gadgets of group GROUP.
const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.GROUP}
spec:
  group: GROUP
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// gadgetChart renders a Gadget only where the cluster serves them, as
// charts gate their ServiceMonitors and PodMonitors.
var gadgetChart = map[string]string{
	"gadgets/Chart.yaml":  "apiVersion: v2\nname: gadgets\nversion: 1.0.0\n",
	"gadgets/values.yaml": "group: example.com\n",
	"gadgets/templates/gadget.yaml": `{{- if .Capabilities.APIVersions.Has (printf "%s/v1/Gadget" .Values.group) }}
apiVersion: {{ .Values.group }}/v1
kind: Gadget
metadata: {name: gadget}
spec: {size: 3}
{{- end }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gadgets-seen}
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  pdb: {{ .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" | quote }}
`,
}

// gadgetsApp is wave 1 of the root: the chart, told the CRD's group.
const gadgetsApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: gadgets
  annotations: {argocd.argoproj.io/sync-wave: "1"}
spec:
  project: default
  source:
    repoURL: REPO
    path: gadgets
    targetRevision: main
    helm: {parameters: [{name: group, value: GROUP}]}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy: {automated: {prune: true}}
`

// TestChartSeesCRDOfEarlierWave: a chart that tests .Capabilities for a
// kind renders it when an earlier wave of its app of apps installed the
// CRD: the destination's API versions are discovered again once the CRD
// appears, and the chart sees the cluster's version and its built-in APIs.
func TestChartSeesCRDOfEarlierWave(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	group := h.ns + ".caps.example.com"
	files := map[string]string{"crds/gadget-crd.yaml": strings.ReplaceAll(gadgetCRD, "GROUP", group)}
	for k, v := range gadgetChart {
		files[k] = v
	}
	repo := testenv.NewGitRepo(t, files)
	apps := strings.NewReplacer("REPO", repo.Dir, "NAMESPACE", h.ns, "GROUP", group)
	repo.Commit(map[string]string{
		"apps/crds.yaml":    child(h, repo, "crds", "0"),
		"apps/gadgets.yaml": apps.Replace(gadgetsApp),
	}, "add apps")
	crds := testenv.Get(t).Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{}) })

	h.apply(strings.ReplaceAll(rootApp, "REPO", repo.Dir))
	h.waitApp("gadgets", 90*time.Second, "gadgets Synced and Healthy", syncedHealthy)
	gadgets := testenv.Get(t).Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"})
	if _, err := gadgets.Namespace(h.ns).Get(t.Context(), "gadget", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Gadget: %v", err)
	}
	seen, err := testenv.Get(t).Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		Namespace(h.ns).Get(t.Context(), "gadgets-seen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeVersion, _, _ := unstructured.NestedString(seen.Object, "data", "kubeVersion")
	pdb, _, _ := unstructured.NestedString(seen.Object, "data", "pdb")
	if !strings.HasPrefix(kubeVersion, "v1.") || strings.Contains(kubeVersion, "master") || pdb != "true" {
		t.Errorf("the chart saw kube version %q and policy/v1/PodDisruptionBudget %q, want the cluster's release and true", kubeVersion, pdb)
	}
}
