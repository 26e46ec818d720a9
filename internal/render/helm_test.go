package render

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

const testKubeVersion = "v1.31.0"

// runHelm runs the helm CLI with a private home and returns stdout.
func runHelm(t *testing.T, dir string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// copyDir copies a fixture so the helm CLI may write into it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func fixtureTree(t testing.TB, dir string) *source.Tree {
	t.Helper()
	tree, err := source.ReadDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func objectMaps(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}

func TestHelmMatchesHelmTemplate(t *testing.T) {
	tests := map[string]struct {
		app, ns  string
		helm     *v1alpha1.ApplicationSourceHelm
		caps     Capabilities
		helmArgs []string // besides chart, release, namespace and kube version
	}{
		"defaults": {
			app: "shop", helmArgs: []string{"--include-crds"},
		},
		"an app outside the control namespace is released by its name": {
			app: "team-a_shop", helmArgs: []string{"--include-crds"},
		},
		"release name and namespace": {
			app: "shop", ns: "team-a",
			helm:     &v1alpha1.ApplicationSourceHelm{ReleaseName: "web-prod", Namespace: "override"},
			helmArgs: []string{"--include-crds"},
		},
		"value files, values and parameters": {
			app: "shop", ns: "prod",
			helm: &v1alpha1.ApplicationSourceHelm{
				ValueFiles: []string{"values-prod.yaml", "/envs/prod.yaml", "missing.yaml"}, IgnoreMissingValueFiles: true,
				Values: "config:\n  greeting: from inline\n  list: [a, b]\n",
				Parameters: []v1alpha1.HelmParameter{
					{Name: "replicaCount", Value: "5"}, {Name: "config.count", Value: "7", ForceString: true},
					{Name: "config.flag", Value: "a,b"}, {Name: "config.list", Value: "{x,y}"},
				},
				FileParameters: []v1alpha1.HelmFileParameter{{Name: "config.file", Path: "config.txt"}},
			},
			helmArgs: []string{"--include-crds", "-f", "values-prod.yaml", "-f", "../envs/prod.yaml", "-f", "INLINE",
				"--set", "replicaCount=5", "--set", `config.flag=a\,b`, "--set", "config.list={x,y}",
				"--set-string", "config.count=7", "--set-file", "config.file=config.txt"},
		},
		"valuesObject wins over values": {
			app: "shop",
			helm: &v1alpha1.ApplicationSourceHelm{
				Values:       "config:\n  greeting: ignored\n",
				ValuesObject: &runtime.RawExtension{Raw: []byte(`{"config":{"greeting":"from object"}}`)},
			},
			helmArgs: []string{"--include-crds", "--set", "config.greeting=from object"},
		},
		"skip crds, skip tests, dependency disabled": {
			app: "shop",
			helm: &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true,
				Parameters: []v1alpha1.HelmParameter{{Name: "lib.enabled", Value: "false"}}},
			helmArgs: []string{"--skip-tests", "--set", "lib.enabled=false"},
		},
		"destination capabilities": {
			app:      "shop",
			caps:     Capabilities{KubeVersion: "v1.29.4", APIVersions: []string{"networking.k8s.io/v1/Ingress", "example.com/v1"}},
			helmArgs: []string{"--include-crds", "--kube-version", "v1.29.4", "--api-versions", "networking.k8s.io/v1/Ingress", "--api-versions", "example.com/v1"},
		},
		"source kubeVersion and apiVersions win": {
			app:      "shop",
			caps:     Capabilities{KubeVersion: "v1.29.4"},
			helm:     &v1alpha1.ApplicationSourceHelm{KubeVersion: "1.30.1", APIVersions: []string{"example.com/v1"}},
			helmArgs: []string{"--include-crds", "--kube-version", "1.30.1", "--api-versions", "example.com/v1"},
		},
	}
	fixture := filepath.Join("testdata", "repo")
	tree := fixtureTree(t, fixture)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			caps := tc.caps
			if caps.KubeVersion == "" {
				caps.KubeVersion = testKubeVersion
			}
			req := &Request{AppName: tc.app, Namespace: tc.ns, Tree: tree, Capabilities: caps,
				Source: v1alpha1.ApplicationSource{RepoURL: fixture, Path: "web", Helm: tc.helm}}
			got, err := (&Helm{}).Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := helmTemplate(t, fixture, req, tc.helmArgs)
			if diff := cmp.Diff(objectMaps(want), objectMaps(got.Objects)); diff != "" {
				t.Errorf("wavecd render differs from helm template (-helm +wavecd):\n%s", diff)
			}
		})
	}
}

// helmTemplate runs `helm dependency build` and `helm template` on a copy of
// the fixture, the way Argo CD runs them.
func helmTemplate(t *testing.T, fixture string, req *Request, extra []string) []*unstructured.Unstructured {
	t.Helper()
	repo := copyDir(t, fixture)
	chartDir := filepath.Join(repo, req.Source.Path)
	runHelm(t, chartDir, "dependency", "build", ".")
	h := req.Source.Helm
	if h == nil {
		h = &v1alpha1.ApplicationSourceHelm{}
	}
	// Argo CD releases an app of another namespace by its name alone.
	_, name, _ := strings.Cut(req.AppName, "_")
	args := []string{"template", firstNonEmpty(h.ReleaseName, name, req.AppName), ".",
		"--namespace", firstNonEmpty(h.Namespace, req.Namespace, "default")}
	if !containsFlag(extra, "--kube-version") {
		args = append(args, "--kube-version", req.Capabilities.KubeVersion)
	}
	for _, a := range extra {
		if a == "INLINE" {
			a = "inline-values.yaml"
			if err := os.WriteFile(filepath.Join(chartDir, a), []byte(h.Values), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = append(args, a)
	}
	objs, err := parseHelmOutput(runHelm(t, chartDir, args...), 0)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}
