package render

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// chartRepo packages versions of a small chart with the helm CLI and
// indexes them; it returns the folder.
func chartRepo(t *testing.T, versions ...string) string {
	t.Helper()
	out := t.TempDir()
	for _, v := range versions {
		src := filepath.Join(t.TempDir(), "repochart")
		files := map[string]string{
			"Chart.yaml":        fmt.Sprintf("apiVersion: v2\nname: repochart\nversion: %s\n", v),
			"values.yaml":       "message: hi\n",
			"values-extra.yaml": "message: extra\n",
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: {{ .Chart.Version }}\n  message: {{ .Values.message }}\n",
		}
		folder.Write(t, src, files)
		runHelm(t, src, "package", ".", "--destination", out)
	}
	runHelm(t, out, "repo", "index", ".")
	return out
}

// serveCharts serves dir on 127.0.0.1 behind basic auth.
func serveCharts(t *testing.T, dir, user, pass string) string {
	t.Helper()
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHelmRepositoryCharts(t *testing.T) {
	dir := chartRepo(t, "0.1.0", "0.1.5", "0.2.0")
	url := serveCharts(t, dir, "robot", "pw")
	charts := source.NewCharts(source.ChartsOptions{Credentials: source.Credentials{{URL: url, Username: "robot", Password: "pw", Type: "helm"}}})
	tests := map[string]struct {
		version    string
		valueFiles []string
		want       string // chart version rendered
		wantMsg    string
	}{
		"newest":                {version: "", want: "0.2.0", wantMsg: "hi"},
		"exact":                 {version: "0.1.0", want: "0.1.0", wantMsg: "hi"},
		"range":                 {version: "~0.1.0", want: "0.1.5", wantMsg: "hi"},
		"value file from chart": {version: "0.2.0", valueFiles: []string{"values-extra.yaml"}, want: "0.2.0", wantMsg: "extra"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := v1alpha1.ApplicationSource{RepoURL: url, Chart: "repochart", TargetRevision: tc.version,
				Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: tc.valueFiles}}
			req := &Request{AppName: "rc", Source: src, Capabilities: Capabilities{KubeVersion: testKubeVersion}}
			got, err := (&Helm{Charts: charts}).Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"template", "rc", "repochart", "--repo", url, "--username", "robot", "--password", "pw", "--kube-version", testKubeVersion}
			if tc.version != "" {
				args = append(args, "--version", tc.version)
			}
			want, err := parseHelmOutput(runHelm(t, t.TempDir(), args...), 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.valueFiles == nil {
				if diff := cmp.Diff(objectMaps(want), objectMaps(got.Objects)); diff != "" {
					t.Errorf("wavecd differs from helm template --repo (-helm +wavecd):\n%s", diff)
				}
			}
			data := got.Objects[0].Object["data"].(map[string]any)
			if data["version"] != tc.want || data["message"] != tc.wantMsg || got.Revisions[0] != tc.want {
				t.Errorf("rendered %v (revision %v), want version %s message %s", data, got.Revisions, tc.want, tc.wantMsg)
			}
		})
	}
}

func TestHelmRepositoryErrors(t *testing.T) {
	dir := chartRepo(t, "0.1.0")
	url := serveCharts(t, dir, "robot", "pw")
	mirrors := source.Mirrors{}
	mirrors.Add("https://charts.example.com/stable", dir)
	tests := map[string]struct {
		creds   source.Credentials
		repo    string
		version string
		wantErr string
	}{
		"no credentials":  {repo: url, wantErr: "401 Unauthorized"},
		"no such version": {repo: url, version: "9.9.9", creds: source.Credentials{{URL: url, Username: "robot", Password: "pw"}}, wantErr: "repochart 9.9.9 from " + url},
		"mirror":          {repo: "https://charts.example.com/stable", version: "0.1.0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			charts := source.NewCharts(source.ChartsOptions{Credentials: tc.creds, Mirrors: mirrors})
			req := &Request{AppName: "rc", Source: v1alpha1.ApplicationSource{RepoURL: tc.repo, Chart: "repochart", TargetRevision: tc.version}}
			res, err := (&Helm{Charts: charts}).Render(t.Context(), req)
			if tc.wantErr == "" {
				if err != nil || len(res.Objects) != 1 {
					t.Fatalf("render = %v, %v; want one object", res, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
