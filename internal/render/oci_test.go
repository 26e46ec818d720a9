package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// ociChartRegistry pushes versions of chartRepo's chart to a registry
// behind basic auth as charts/repochart and returns it.
func ociChartRegistry(t *testing.T, user, pass string, versions ...string) *ociRegistry {
	t.Helper()
	dir := chartRepo(t, versions...)
	reg := serveOCI(t, user, pass)
	for _, v := range versions {
		reg.pushFile(t, "charts/repochart", filepath.Join(dir, "repochart-"+v+".tgz"))
	}
	return reg
}

func chartApp(name, repoURL, chartName, version string) *v1alpha1.Application {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Chart: chartName, TargetRevision: version},
		Destination: v1alpha1.ApplicationDestination{Namespace: "apps"},
	}}
	app.Name = name
	return app
}

// manifestsOnly drops the "Pulled:" and "Digest:" lines `helm template`
// prints before the manifests of a chart from a registry.
func manifestsOnly(out string) string {
	if i := strings.Index(out, "---\n"); i >= 0 {
		return out[i:]
	}
	return out
}

func TestOCIChartsMatchHelmTemplate(t *testing.T) {
	reg := ociChartRegistry(t, "robot", "s3cret-pw", "0.1.0", "0.1.5", "0.2.0")
	repoURL := "oci://" + reg.Host + "/charts"
	secret := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: "argocd", Labels: map[string]string{source.SecretTypeLabel: source.SecretTypeRepo}},
		StringData: map[string]string{"url": repoURL, "type": "helm", "enableOCI": "true", "insecureOCIForceHttp": "true",
			"username": "robot", "password": "s3cret-pw"},
	}
	creds, err := source.CredentialsFromSecrets([]corev1.Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{}), Charts: source.NewCharts(source.ChartsOptions{})})
	engine.SetCredentials(creds)
	caps := Capabilities{KubeVersion: testKubeVersion}
	tests := map[string]struct {
		version, want string
	}{
		"exact version": {version: "0.1.0", want: "0.1.0"},
		"semver range":  {version: "~0.1.0", want: "0.1.5"},
		"newest":        {version: "", want: "0.2.0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := engine.RenderApp(t.Context(), chartApp("rc", repoURL, "repochart", tc.version), caps)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"template", "rc", repoURL + "/repochart", "--plain-http", "--username", "robot", "--password", "s3cret-pw",
				"--namespace", "apps", "--kube-version", testKubeVersion}
			if tc.version != "" {
				args = append(args, "--version", tc.version)
			}
			want, err := parseHelmOutput(manifestsOnly(runHelm(t, t.TempDir(), args...)), 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(objectMaps(want), objectMaps(got.Objects)); diff != "" {
				t.Errorf("wavecd differs from helm template oci:// (-helm +wavecd):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tc.want}, got.Revisions); diff != "" {
				t.Errorf("revisions (-want +got):\n%s", diff)
			}
			if v := got.Objects[0].Object["data"].(map[string]any)["version"]; v != tc.want {
				t.Errorf("rendered chart version %v, want %s", v, tc.want)
			}
		})
	}
}

func TestOCIChartErrors(t *testing.T) {
	reg := ociChartRegistry(t, "robot", "s3cret-pw", "0.1.0")
	repoURL := "oci://" + reg.Host + "/charts"
	good := source.Credentials{{URL: repoURL, Username: "robot", Password: "s3cret-pw", InsecureOCIForceHTTP: true}}
	tests := map[string]struct {
		opts           source.ChartsOptions
		chart, version string
		wantErr        []string // every one must be in the error
	}{
		"no credentials": {
			opts: source.ChartsOptions{PlainHTTPRegistries: true}, version: "0.1.0",
			wantErr: []string{"chart repochart 0.1.0 from " + repoURL, "basic credential not found"},
		},
		"wrong password": {
			opts:    source.ChartsOptions{Credentials: source.Credentials{{URL: repoURL, Username: "robot", Password: "wrong-pw", InsecureOCIForceHTTP: true}}},
			version: "~0.1", wantErr: []string{"chart repochart ~0.1 from " + repoURL, "list tags", "401"},
		},
		"HTTPS unless plain HTTP is asked for": {
			opts:    source.ChartsOptions{Credentials: source.Credentials{{URL: repoURL, Username: "robot", Password: "s3cret-pw"}}},
			version: "0.1.0", wantErr: []string{"chart repochart 0.1.0 from " + repoURL, "HTTP response to HTTPS client"},
		},
		"no such version": {
			opts: source.ChartsOptions{Credentials: good}, version: "9.9.9",
			wantErr: []string{"chart repochart 9.9.9 from " + repoURL, "not found"},
		},
		"no version in the range": {
			opts: source.ChartsOptions{Credentials: good}, version: "^5.0.0",
			wantErr: []string{`no tag of ` + reg.Host + `/charts/repochart matches "^5.0.0"`},
		},
		"no such chart": {
			opts: source.ChartsOptions{Credentials: good}, chart: "nochart",
			wantErr: []string{"chart nochart (latest) from " + repoURL, "list tags"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{}), Charts: source.NewCharts(tc.opts)})
			_, err := engine.RenderApp(t.Context(), chartApp("rc", repoURL, firstNonEmpty(tc.chart, "repochart"), tc.version), Capabilities{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v\nwant it to contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "wrong-pw") {
				t.Errorf("error shows a password: %v", err)
			}
		})
	}
}
