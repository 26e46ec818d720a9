package deploy_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files and the generated kustomize base")

const (
	chartDir         = "helm/wavecd"
	kustomizeDir     = "kustomize"
	apiCRDDir        = "../api/v1alpha1/crds"
	releaseName      = "wavecd"
	releaseNamespace = "argocd"
	namespacedValues = "testdata/values-namespaced.yaml"
)

// doc is one object of a rendered manifest.
type doc struct {
	source string // the template, from Helm's "# Source:" line
	text   string
	obj    *unstructured.Unstructured
}

func (d doc) key() string { return objectKey(d.obj) }

func objectKey(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s/%s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}

// rendered is what `helm install --dry-run` of the chart produces.
type rendered struct {
	manifest string
	notes    string
	docs     []doc
}

// byKind returns the objects of one kind.
func (r rendered) byKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, d := range r.docs {
		if d.obj.GetKind() == kind {
			out = append(out, d.obj)
		}
	}
	return out
}

// renderChart renders the chart as release wavecd in namespace argocd, the
// way `helm install --dry-run=client` does (NOTES.txt included).
func renderChart(t *testing.T, values map[string]any) rendered {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	inst := action.NewInstall(action.NewConfiguration())
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.ReleaseName = releaseName
	inst.Namespace = releaseNamespace
	rel, err := inst.RunWithContext(context.Background(), c, values)
	if err != nil {
		t.Fatalf("render chart: %v", err)
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("render chart: unexpected release type %T", rel)
	}
	docs, err := splitManifest(r.Manifest)
	if err != nil {
		t.Fatalf("rendered chart: %v", err)
	}
	return rendered{manifest: r.Manifest, notes: r.Info.Notes, docs: docs}
}

var (
	docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
	sourceLine   = regexp.MustCompile(`(?m)^# Source: (.+)$`)
)

// splitManifest parses multi-document YAML, keeping each document's text.
func splitManifest(text string) ([]doc, error) {
	var out []doc
	for _, part := range docSeparator.Split(text, -1) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
			return nil, fmt.Errorf("parse %q: %w", firstLines(part), err)
		}
		if len(obj) == 0 {
			continue
		}
		d := doc{text: part + "\n", obj: &unstructured.Unstructured{Object: obj}}
		if m := sourceLine.FindStringSubmatch(part); m != nil {
			d.source = m[1]
		}
		out = append(out, d)
	}
	return out, nil
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// readValues reads a values file.
func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseValues(t, string(data))
}

func parseValues(t *testing.T, text string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &vals); err != nil {
		t.Fatalf("parse values: %v", err)
	}
	return vals
}

// checkGolden compares got with the file at path, or writes it with -update.
func checkGolden(t *testing.T, path, got, regenerate string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s)", err, regenerate)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is out of date (-file +rendered); run %s:\n%s", path, regenerate, diff)
	}
}

// withoutCRDs is the manifest text less the CRDs (checked on their own
// against api/v1alpha1/crds), one object after another.
func withoutCRDs(docs []doc) string {
	var b strings.Builder
	for _, d := range docs {
		if d.obj.GetKind() == "CustomResourceDefinition" {
			continue
		}
		b.WriteString("---\n")
		b.WriteString(d.text)
	}
	return b.String()
}

func TestChartLint(t *testing.T) {
	tests := map[string]map[string]any{
		"default values": nil,
		"namespaced mode, ingress, ServiceMonitor, 2 replicas": readValues(t, namespacedValues),
	}
	for name, vals := range tests {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Namespace = releaseNamespace
			res := lint.Run([]string{chartDir}, vals)
			var problems []string
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					problems = append(problems, m.Error())
				}
			}
			for _, err := range res.Errors {
				problems = append(problems, err.Error())
			}
			if res.TotalChartsLinted != 1 || len(problems) > 0 {
				t.Errorf("helm lint: %d chart(s) linted, problems:\n%s", res.TotalChartsLinted, strings.Join(problems, "\n"))
			}
		})
	}
}

// TestChartGolden pins the rendered objects (less the CRDs) and NOTES.txt.
func TestChartGolden(t *testing.T) {
	tests := map[string]map[string]any{
		"default":    nil,
		"namespaced": readValues(t, namespacedValues),
		"plugins":    readValues(t, "testdata/values-plugins.yaml"),
	}
	for name, vals := range tests {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, vals)
			regenerate := "go test ./deploy -update"
			checkGolden(t, filepath.Join("testdata", "golden", name+".yaml"), withoutCRDs(r.docs), regenerate)
			checkGolden(t, filepath.Join("testdata", "golden", name+".notes.txt"), r.notes, regenerate)
		})
	}
}

func TestChartRenderedObjects(t *testing.T) {
	tests := map[string]struct {
		values map[string]any
		want   []string
	}{
		"default": {
			want: []string{
				"ClusterRole//wavecd-controller-manage", "ClusterRole//wavecd-server-resources",
				"ClusterRoleBinding//wavecd-controller-manage", "ClusterRoleBinding//wavecd-server-resources",
				"ConfigMap/argocd/argocd-cm", "ConfigMap/argocd/argocd-notifications-cm", "ConfigMap/argocd/argocd-rbac-cm",
				"CustomResourceDefinition//applications.argoproj.io", "CustomResourceDefinition//applicationsets.argoproj.io",
				"CustomResourceDefinition//appprojects.argoproj.io",
				"Deployment/argocd/wavecd-controller", "Deployment/argocd/wavecd-server",
				"Role/argocd/wavecd-controller", "Role/argocd/wavecd-server",
				"RoleBinding/argocd/wavecd-controller", "RoleBinding/argocd/wavecd-server",
				"Secret/argocd/argocd-notifications-secret", "Secret/argocd/argocd-secret",
				"Service/argocd/wavecd-controller", "Service/argocd/wavecd-server",
				"ServiceAccount/argocd/wavecd-controller", "ServiceAccount/argocd/wavecd-server",
			},
		},
		"no CRDs, no server, settings managed elsewhere": {
			values: parseValues(t, `
crds: {install: false}
server: {enabled: false}
configs: {cm: {create: false}, rbac: {create: false}, secret: {createSecret: false}}
notifications: {cm: {create: false}, secret: {create: false}}
rbac: {clusterAdmin: false}
serviceAccount: {create: false, name: existing}
`),
			want: []string{
				"Deployment/argocd/wavecd-controller", "Role/argocd/wavecd-controller",
				"RoleBinding/argocd/wavecd-controller", "Service/argocd/wavecd-controller",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, tc.values)
			var got []string
			for _, d := range r.docs {
				got = append(got, d.key())
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChartRefusesBrokenValues(t *testing.T) {
	tests := map[string]struct {
		values string
		want   string
	}{
		"namespaced without namespaces": {
			values: "rbac: {namespaced: true}",
			want:   "rbac.managedNamespaces is empty",
		},
		"ingress without hosts": {
			values: "server: {ingress: {enabled: true}}",
			want:   "server.ingress.hosts is empty",
		},
		"no controller": {
			values: "controller: {replicas: 0}",
			want:   "controller.replicas must be at least 1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := loader.Load(chartDir)
			if err != nil {
				t.Fatal(err)
			}
			inst := action.NewInstall(action.NewConfiguration())
			inst.DryRunStrategy = action.DryRunClient
			inst.ReleaseName, inst.Namespace = releaseName, releaseNamespace
			_, err = inst.RunWithContext(context.Background(), c, parseValues(t, tc.values))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
