package render

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// depChartFiles is a chart "app" that depends on repochart from repoURL
// and passes it a value; lock, when set, pins repochart in Chart.lock.
func depChartFiles(repoURL, constraint, lock string) map[string]string {
	files := map[string]string{
		"app/Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n"+
			"  - name: repochart\n    version: %q\n    repository: %s\n", constraint, repoURL),
		"app/values.yaml":        "repochart:\n  message: from the parent\nown: yes\n",
		"app/templates/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-own\ndata:\n  own: {{ .Values.own | quote }}\n",
	}
	if lock != "" {
		files["app/Chart.lock"] = fmt.Sprintf("dependencies:\n- name: repochart\n  repository: %s\n  version: %s\n"+
			"digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\ngenerated: \"2025-01-01T00:00:00Z\"\n", repoURL, lock)
	}
	return files
}

// offline is an HTTP transport that fails the test on any request.
type offline struct{ t *testing.T }

func (o offline) RoundTrip(req *http.Request) (*http.Response, error) {
	o.t.Errorf("network access while offline: %s %s", req.Method, req.URL.Redacted())
	return nil, fmt.Errorf("offline")
}

func TestGitChartDependencies(t *testing.T) {
	dir := chartRepo(t, "0.1.0", "0.1.5", "0.2.0")
	httpURL := serveCharts(t, dir, "robot", "pw")
	reg := ociChartRegistry(t, "", "", "0.1.0", "0.1.5", "0.2.0")
	ociURL := "oci://" + reg.Host + "/charts"
	mirrors := source.Mirrors{}
	mirrors.Add(httpURL, dir)
	const publicOCI = "oci://public.ecr.example.com/charts" // served by the loopback registry
	mirrors.Add(publicOCI, ociURL)
	const gitURL = "https://git.example.com/acme/app.git" // mirrored: no network
	tests := map[string]struct {
		repoURL, constraint, lock string
		charts                    source.ChartsOptions
		want                      string // repochart version rendered
	}{
		"HTTP repository, newest in range": {repoURL: httpURL, constraint: "~0.1.0", want: "0.1.5",
			charts: source.ChartsOptions{Credentials: source.Credentials{{URL: httpURL, Username: "robot", Password: "pw"}}}},
		"HTTP repository, Chart.lock pins": {repoURL: httpURL, constraint: "~0.1.0", lock: "0.1.0", want: "0.1.0",
			charts: source.ChartsOptions{Credentials: source.Credentials{{URL: httpURL, Username: "robot", Password: "pw"}}}},
		"OCI registry": {repoURL: ociURL, constraint: ">=0.1.0 <0.2.0", want: "0.1.5",
			charts: source.ChartsOptions{PlainHTTPRegistries: true}},
		"OCI registry through a loopback registry mirror, plain HTTP": {repoURL: publicOCI, constraint: "0.1.5", want: "0.1.5",
			charts: source.ChartsOptions{Mirrors: mirrors}},
		"HTTP repository through a mirror, offline": {repoURL: httpURL, constraint: "~0.1.0", want: "0.1.5",
			charts: source.ChartsOptions{Mirrors: mirrors, HTTPClient: &http.Client{Transport: offline{t}}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			folder.Write(t, work, depChartFiles(tc.repoURL, tc.constraint, tc.lock))
			commitAll(t, work)
			gitMirror := source.Mirrors{}
			gitMirror.Add(gitURL, work)
			engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{Mirrors: gitMirror}), Charts: source.NewCharts(tc.charts)})
			app := bigChartApp(gitURL)
			app.Spec.Source.Path = "app"
			got, err := engine.RenderApp(t.Context(), app, Capabilities{KubeVersion: testKubeVersion})
			if err != nil {
				t.Fatal(err)
			}
			want := helmTemplateVendored(t, filepath.Join(work, "app"), filepath.Join(dir, "repochart-"+tc.want+".tgz"))
			if diff := cmp.Diff(objectMaps(want), objectMaps(got.Objects)); diff != "" {
				t.Errorf("wavecd differs from helm template with the dependency vendored (-helm +wavecd):\n%s", diff)
			}
			var dep map[string]any
			for _, o := range got.Objects {
				if o.GetName() == "bench" {
					dep, _ = o.Object["data"].(map[string]any)
				}
			}
			if dep["version"] != tc.want || dep["message"] != "from the parent" {
				t.Errorf("dependency rendered %v, want version %s with the parent's message", dep, tc.want)
			}
		})
	}
}

// helmTemplateVendored runs `helm template` on a copy of chartDir with
// archive copied into its charts/ folder, as `helm dependency build` would.
func helmTemplateVendored(t *testing.T, chartDir, archive string) []*unstructured.Unstructured {
	t.Helper()
	chart := copyDir(t, chartDir)
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	folder.Write(t, chart, map[string]string{"charts/" + filepath.Base(archive): string(data)})
	objs, err := parseHelmOutput(runHelm(t, chart, "template", "bench", ".", "--namespace", "bench", "--kube-version", testKubeVersion), 0)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
