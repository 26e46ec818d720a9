package render

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// helmChartsRepo writes a repository whose kustomization inflates a chart
// vendored in charts/ and one pulled from the chart repository at url.
func helmChartsRepo(t *testing.T, url string) string {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{
		"app/kustomization.yaml": `namespace: shop
namePrefix: k-
resources:
- sa.yaml
helmCharts:
- name: localchart
  releaseName: local
  valuesInline:
    message: inline
    nested: {b: from-inline}
- name: localchart
  releaseName: withcrds
  includeCRDs: true
  skipHooks: true
  valuesMerge: merge
  valuesInline:
    message: loses-to-the-file
    nested: {b: from-inline}
- name: repochart
  repo: ` + url + `
  version: 0.1.5
  releaseName: remote
  namespace: elsewhere
  valuesFile: values-remote.yaml
  additionalValuesFiles: [extra.yaml]
`,
		"app/sa.yaml":                       "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n",
		"app/values-remote.yaml":            "message: from-values-file\n",
		"app/extra.yaml":                    "message: from-additional-file\n",
		"app/charts/localchart/Chart.yaml":  "apiVersion: v2\nname: localchart\nversion: 1.0.0\n",
		"app/charts/localchart/values.yaml": "message: chart-default\nnested: {a: from-chart, b: from-chart}\n",
		"app/charts/localchart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\n" +
			"data:\n  message: {{ .Values.message }}\n  a: {{ .Values.nested.a }}\n  b: {{ .Values.nested.b }}\n  kube: {{ .Capabilities.KubeVersion.Minor | quote }}\n",
		"app/charts/localchart/templates/hook.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-install\n",
		"app/charts/localchart/crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n" +
			"spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
	})
	return dir
}

// kustomizeWithHelmCLI builds dir/app the way `kustomize build
// --enable-helm` does, running the helm CLI built from our Helm version.
func kustomizeWithHelmCLI(t *testing.T, dir string) []map[string]any {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	opts.PluginConfig = types.EnabledPluginConfig(types.BploLoadFromFileSys)
	opts.PluginConfig.HelmConfig = types.HelmConfig{Enabled: true, Command: helmBin, KubeVersion: "v1.31.0"}
	t.Setenv("HOME", t.TempDir())
	resMap, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, "app"))
	if err != nil {
		t.Fatalf("kustomize build --enable-helm with the helm CLI: %v", err)
	}
	out, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := parseManifests("kustomize", out, 0)
	if err != nil {
		t.Fatal(err)
	}
	return normalized(objs)
}

func TestKustomizeHelmChartsMatchKustomize(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir(chartRepo(t, "0.1.0", "0.1.5"))))
	t.Cleanup(srv.Close)
	ours := helmChartsRepo(t, srv.URL)
	theirs := helmChartsRepo(t, srv.URL) // kustomize's helm pull writes into the repository
	tree, err := source.ReadDir(t.Context(), ours)
	if err != nil {
		t.Fatal(err)
	}
	k := Kustomize{Helm: &Helm{Charts: source.NewCharts(source.ChartsOptions{})}}
	req := &Request{AppName: "app", Namespace: "shop", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "app"},
		Kustomize: KustomizeSettings{BuildOptions: "--enable-helm"}, Capabilities: Capabilities{KubeVersion: "v1.31.0"}}
	res, err := k.Render(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := kustomizeWithHelmCLI(t, theirs)
	if diff := gocmp.Diff(want, normalized(res.Objects)); diff != "" {
		t.Errorf("helmCharts differ from kustomize with the helm CLI (-kustomize +ours):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(ours, "app", "charts", "repochart-0.1.5")); !os.IsNotExist(err) {
		t.Errorf("the pulled chart was written into the repository: %v", err)
	}
}

func TestKustomizeBuildOptions(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir(chartRepo(t, "0.1.5"))))
	t.Cleanup(srv.Close)
	tree, err := source.ReadDir(t.Context(), helmChartsRepo(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		settings     KustomizeSettings
		version      string
		wantErr      string
		wantWarnings []string
	}{
		"helm charts without --enable-helm": {
			wantErr: "must specify --enable-helm",
		},
		"per-version options": {
			settings: KustomizeSettings{BuildOptions: "--load-restrictor LoadRestrictionsNone", Versions: map[string]string{"v5.4.3": "--enable-helm --reorder=none"}},
			version:  "v5.4.3",
		},
		"per-version options of another version": {
			settings: KustomizeSettings{Versions: map[string]string{"v5.4.3": "--enable-helm"}},
			version:  "v4.5.7", wantErr: "must specify --enable-helm",
		},
		"helm command and plugins ignored with a warning": {
			settings: KustomizeSettings{BuildOptions: "--enable-helm --helm-command /usr/local/bin/helm --enable-alpha-plugins"},
			wantWarnings: []string{
				"argocd-cm key kustomize.buildOptions: --helm-command /usr/local/bin/helm ignored: charts are inflated with the Helm SDK, never a helm binary",
				"argocd-cm key kustomize.buildOptions: --enable-alpha-plugins ignored: wavecd runs no kustomize plugins or functions",
			},
		},
		"unknown flag": {
			settings: KustomizeSettings{BuildOptions: "--enable-helm --frobnicate"},
			wantErr:  `argocd-cm key kustomize.buildOptions: unknown kustomize build flag "--frobnicate"`,
		},
		"bad load restrictor": {
			settings: KustomizeSettings{BuildOptions: "--load-restrictor=sometimes"},
			wantErr:  `--load-restrictor "sometimes": want LoadRestrictionsRootOnly or LoadRestrictionsNone`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := v1alpha1.ApplicationSource{Path: "app"}
			if tc.version != "" {
				src.Kustomize = &v1alpha1.ApplicationSourceKustomize{Version: tc.version}
			}
			k := Kustomize{Helm: &Helm{Charts: source.NewCharts(source.ChartsOptions{})}}
			res, err := k.Render(t.Context(), &Request{AppName: "app", Tree: tree, Source: src, Kustomize: tc.settings})
			if wantedError(t, err, tc.wantErr) {
				return
			}
			if diff := gocmp.Diff(tc.wantWarnings, res.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKustomizeHelmChartPaths(t *testing.T) {
	tests := map[string]struct {
		kustomization string
		wantErr       string
	}{
		"chart home out of the repository": {
			kustomization: "helmGlobals: {chartHome: ../../..}\nhelmCharts: [{name: x}]\n",
			wantErr:       `helmGlobals.chartHome: path "../../.." leaves the repository root`,
		},
		"values file out of the repository": {
			kustomization: "helmCharts: [{name: c, valuesFile: ../../etc/passwd}]\n",
			wantErr:       `valuesFile: path "../../etc/passwd" leaves the repository root`,
		},
		"no chart and no repo": {
			kustomization: "helmCharts: [{name: missing}]\n",
			wantErr:       "no repo specified for pull, no chart found at 'app/charts/missing'",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tree := treeOf(t, map[string]string{
				"app/kustomization.yaml":  tc.kustomization,
				"app/charts/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
			})
			k := Kustomize{Helm: &Helm{}}
			_, err := k.Render(t.Context(), &Request{AppName: "app", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "app"}, Kustomize: KustomizeSettings{BuildOptions: "--enable-helm"}})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestKustomizeSettingsFrom(t *testing.T) {
	got := KustomizeSettingsFrom(map[string]string{"kustomize.buildOptions": "--enable-helm", "kustomize.buildOptions.v5.0.0": "--reorder none", "kustomize.path.v5.0.0": "/x"})
	want := KustomizeSettings{BuildOptions: "--enable-helm", Versions: map[string]string{"v5.0.0": "--reorder none"}}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}
