package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	mirror := "--mirror=https://github.com/acme/seed=" + filepath.Join("testdata", "render", "seed")
	app := func(name string) string { return filepath.Join("testdata", "render", name) }
	tests := map[string]struct {
		args       []string
		golden     string
		wantErr    string
		wantStderr string
		stderrHas  []string
	}{
		"settings from an argo-cd values file serve the mirror": {
			args: []string{"render", "-f", app("root-app.yaml"), "--settings", app("argocd-values.yaml")}, golden: "render-root.yaml",
			stderrHas: []string{"warning: settings testdata/render/argocd-values.yaml: server: the chart's workload values, not settings: left out"},
		},
		"a health check in the settings that does not compile": {
			args: []string{"render", "-f", app("root-app.yaml"), "--settings", app("bad-lua-values.yaml"), mirror}, golden: "render-root.yaml",
			stderrHas: []string{"warning: settings testdata/render/bad-lua-values.yaml: argocd-cm key resource.customizations.health.apps_Deployment: " +
				"lua script does not compile"},
		},
		"settings that are not settings": {
			args:    []string{"render", "-f", app("root-app.yaml"), "--settings", app("root-app.yaml")},
			wantErr: "settings testdata/render/root-app.yaml: Application root is not a v1 ConfigMap or Secret",
		},
		"app of apps root": {
			args: []string{"render", "-f", app("root-app.yaml"), mirror}, golden: "render-root.yaml",
		},
		"multiple sources with a ref, as json": {
			args: []string{"render", "-f", app("app-b.yaml"), mirror, "-o", "json"}, golden: "render-app-b.json",
		},
		"local folder with helm flags": {
			args:   []string{"render", "--repo", app("seed"), "--path", "charts/app-a", "--helm-set", "replicaCount=7", "--values", "values-prod.yaml", "-n", "team"},
			golden: "render-repo.yaml",
		},
		"unknown and unimplemented fields are warnings naming file and line": {
			args: []string{"render", "-f", app("bad-field.yaml"), mirror}, golden: "render-bad-field.yaml",
			wantStderr: "warning: testdata/render/bad-field.yaml:10: unknown field \"spec.source.pth\" ignored\n" +
				"warning: testdata/render/bad-field.yaml:11: spec.source.tagPrefix: not implemented; targetRevision \"\" is resolved without it\n",
		},
		"broken yaml names file and line": {
			args: []string{"render", "-f", app("bad-yaml.yaml")}, wantErr: "testdata/render/bad-yaml.yaml:6: did not find expected ',' or ']'",
		},
		"value file outside the repository": {
			args:    []string{"render", "-f", app("bad-path.yaml"), mirror},
			wantErr: `testdata/render/bad-path.yaml:9: application escape: spec.source: field helm.valueFiles[0]: path "../../../etc/passwd" leaves the repository root`,
		},
		"unreachable repository": {
			args:    []string{"render", "-f", "UNREACHABLE"},
			wantErr: `unreachable.yaml:7: application unreachable: spec.source: resolve revision "main" of http://robot:xxxxx@127.0.0.1:1/seed.git: list refs:`,
		},
		"capabilities from flags": {
			args: []string{"render", "--repo", app("caps"), "--path", ".", "--kube-version", "v1.30.4-eks-a737599",
				"--api-versions", "v1,v1/ConfigMap,policy/v1beta1,policy/v1beta1/PodDisruptionBudget", "--api-versions", "example.com/v1/Widget"},
			golden: "render-caps-flags.yaml",
		},
		"the version of an unstamped Kubernetes build fails the chart's kubeVersion": {
			args:    []string{"render", "--repo", app("caps"), "--path", ".", "--kube-version", "v0.0.0-master+$Format:%H$"},
			wantErr: `chart requires kubeVersion: >= 1.21.0-0 which is incompatible with Kubernetes v0.0.0-master+$Format:%H$`,
		},
		"neither file nor repo": {args: []string{"render"}, wantErr: "give either -f APP.yaml or --repo DIR"},
		"bad output":            {args: []string{"render", "--repo", ".", "-o", "xml"}, wantErr: `unknown output format "xml": use one of [yaml json]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{}, tc.args...)
			for i, a := range args {
				if a == "UNREACHABLE" {
					args[i] = writeUnreachableApp(t)
				}
			}
			if !containsArg(args, "--cache-dir") {
				args = append(args, "--cache-dir", t.TempDir())
			}
			out, stderr, err := runCLI(t, args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.stderrHas {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			assertGolden(t, tc.golden, out)
			if tc.wantStderr != "" && stderr != tc.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr, tc.wantStderr)
			}
		})
	}
}

// writeUnreachableApp writes an app whose repository is a closed port on
// 127.0.0.1 (and whose URL carries a password that must not be shown).
func writeUnreachableApp(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "unreachable.yaml")
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: unreachable\nspec:\n  project: default\n  source:\n" +
		"    repoURL: http://robot:hunter22@127.0.0.1:1/seed.git\n    targetRevision: main\n  destination:\n    namespace: x\n"
	if err := os.WriteFile(p, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}
