package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// addonsRepo is the Git repository the addons ApplicationSet reads,
// served through --mirror.
func addonsRepo(t *testing.T) string {
	t.Helper()
	repo := testenv.NewGitRepo(t, map[string]string{
		"addons/calico/kustomization.yaml":       "resources: []\n",
		"addons/karpenter/kustomization.yaml":    "resources: []\n",
		"addons/experimental/kustomization.yaml": "resources: []\n",
		"README.md":                              "add-ons\n",
	})
	return "--mirror=https://github.com/acme/addons.git=" + repo.Dir
}

// TestAppsetGenerate: the Applications of a file of ApplicationSets, from
// a Git repository and the cluster Secrets of a settings file, offline.
func TestAppsetGenerate(t *testing.T) {
	t.Parallel()
	mirror := addonsRepo(t)
	file := filepath.Join("testdata", "appset", "addons.yaml")
	clusters := "--settings=" + filepath.Join("testdata", "cluster", "secrets.yaml")
	for _, tc := range []struct{ name, golden, format string }{
		{"table", "appset-generate.txt", "wide"},
		{"yaml", "appset-generate.yaml", "yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, "appset", "generate", file, mirror, clusters, "--cache-dir", t.TempDir(), "-o", tc.format)
			if err != nil {
				t.Fatalf("appset generate: %v\n%s", err, errOut)
			}
			if !strings.Contains(errOut, "document 3: ConfigMap not-an-appset is not an ApplicationSet; left out") {
				t.Errorf("stderr = %q, want a warning about the ConfigMap", errOut)
			}
			assertGolden(t, tc.golden, out)
		})
	}
	t.Run("json", func(t *testing.T) {
		out, errOut, err := runCLI(t, "appset", "generate", file, mirror, "--cache-dir", t.TempDir(), "-o", "json")
		if err != nil {
			t.Fatalf("appset generate: %v\n%s", err, errOut)
		}
		var apps []v1alpha1.Application
		if err := json.Unmarshal([]byte(out), &apps); err != nil {
			t.Fatalf("output is not a JSON list of Applications: %v\n%s", err, out)
		}
		// Without --settings the cluster generator sees in-cluster only,
		// which the selector (env: staging) leaves out.
		var names []string
		for _, a := range apps {
			names = append(names, a.Name)
		}
		if got, want := strings.Join(names, ","), "addon-calico,addon-karpenter"; got != want {
			t.Errorf("apps = %s, want %s", got, want)
		}
	})
}

// TestAppsetGenerateFromCluster: with --kubeconfig the cluster generators
// see the cluster Secrets of that cluster's namespace -n, as with
// --settings.
func TestAppsetGenerateFromCluster(t *testing.T) {
	ns, c := appCluster(t)
	createClusterSecrets(t, c, ns)
	out, errOut, err := runCLI(t, "appset", "generate", filepath.Join("testdata", "appset", "addons.yaml"), addonsRepo(t),
		"--kubeconfig", testenv.Get(t).Kubeconfig, "-n", ns, "--cache-dir", t.TempDir())
	if err != nil {
		t.Fatalf("appset generate: %v\n%s", err, errOut)
	}
	// The same rows as from the settings file: the namespace is the only
	// difference, and the table does not show it.
	assertGolden(t, "appset-generate.txt", out)
}

func TestAppsetGenerateErrors(t *testing.T) {
	t.Parallel()
	notAppset := filepath.Join("testdata", "render", "root-app.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no ApplicationSet", []string{notAppset}, notAppset + " holds no argoproj.io ApplicationSet"},
		{"template error names the set", []string{filepath.Join("testdata", "appset", "bad-template.yaml")},
			"ApplicationSet broken: "},
		{"missing file", []string{filepath.Join("testdata", "appset", "missing.yaml")}, "missing.yaml"},
		{"bad output", []string{notAppset, "-o", "table"}, `unknown output format "table"`},
		{"both cluster sources", []string{filepath.Join("testdata", "appset", "addons.yaml"), "--settings", "x.yaml", "--context", "prod"}, "either with --settings or with --kubeconfig/--context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"appset", "generate", "--cache-dir", t.TempDir()}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
