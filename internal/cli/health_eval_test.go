package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const healthData = "testdata/health/"

func TestHealthEval(t *testing.T) {
	tests := map[string]struct {
		args       []string
		golden     string
		wantStderr string
	}{
		"built-in check, text": {
			args:   []string{"-f", healthData + "deployment.yaml"},
			golden: "health-eval-builtin.txt",
		},
		"built-in check, json": {
			args:   []string{"-f", healthData + "deployment.yaml", "-o", "json"},
			golden: "health-eval-builtin.json",
		},
		"built-in check, yaml": {
			args:   []string{"-f", healthData + "deployment.yaml", "-o", "yaml"},
			golden: "health-eval-builtin.yaml",
		},
		"argocd-cm override": {
			args:   []string{"-f", healthData + "deployment.yaml", "--argocd-cm", healthData + "argocd-cm.yaml"},
			golden: "health-eval-argocd-cm.txt",
		},
		"customizations dir": {
			args:   []string{"-f", healthData + "lib/example.com/Widget/testdata/ready.yaml", "--customizations-dir", healthData + "lib"},
			golden: "health-eval-library.txt",
		},
		"no check, text": {
			args:   []string{"-f", healthData + "configmap.yaml"},
			golden: "health-eval-none.txt",
		},
		"no check, json": {
			args:   []string{"-f", healthData + "configmap.yaml", "-o", "json"},
			golden: "health-eval-none.json",
		},
		"child application": {
			args:   []string{"-f", healthData + "application.yaml", "-o", "json"},
			golden: "health-eval-application.json",
		},
		"child application, argo parity": {
			args:   []string{"-f", healthData + "application.yaml", "-o", "json", "--argo-parity"},
			golden: "health-eval-none.json",
		},
		"generic conditions": {
			args:   []string{"-f", healthData + "database.yaml", "--generic-conditions"},
			golden: "health-eval-generic.txt",
		},
		"workflow without apiVersion and kind": {
			args:       []string{"-f", healthData + "workflow-bare.yaml", "-o", "json"},
			golden:     "health-eval-workflow.json",
			wantStderr: "note: testdata/health/workflow-bare.yaml has no apiVersion and kind; spec.entrypoint marks it as an Argo Workflow\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := runCLI(t, append([]string{"health", "eval"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, out)
			if diff := cmp.Diff(tc.wantStderr, errOut); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthEvalStdin(t *testing.T) {
	obj, err := os.ReadFile(healthData + "deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	root := NewRootCommand(Streams{In: bytes.NewReader(obj), Out: &out, Err: &bytes.Buffer{}})
	root.SetArgs([]string{"health", "eval", "-f", "-", "-o", "json"})
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "health-eval-builtin.json", out.String())
}

func TestHealthErrors(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"eval: no file": {
			args: []string{"eval"},
			want: "no object given: use -f FILE (or -f - for standard input)",
		},
		"eval: missing file": {
			args: []string{"eval", "-f", healthData + "nope.yaml"},
			want: "open testdata/health/nope.yaml: no such file or directory",
		},
		"eval: not yaml": {
			args: []string{"eval", "-f", healthData + "lib/example.com/Sprocket/health_test.yaml"},
			want: "testdata/health/lib/example.com/Sprocket/health_test.yaml: decode object: yaml: line 1: did not find expected ',' or ']'",
		},
		"eval: unknown output format": {
			args: []string{"eval", "-f", healthData + "deployment.yaml", "-o", "xml"},
			want: `unknown output format "xml": use one of [text json yaml]`,
		},
		"eval: argocd-cm is not a ConfigMap": {
			args: []string{"eval", "-f", healthData + "deployment.yaml", "--argocd-cm", healthData + "not-a-configmap.yaml"},
			want: `testdata/health/not-a-configmap.yaml: field kind: want ConfigMap, got "Secret"`,
		},
		"eval: argocd-cm with a malformed key": {
			args: []string{"eval", "-f", healthData + "deployment.yaml", "--argocd-cm", healthData + "bad-key-cm.yaml"},
			want: `testdata/health/bad-key-cm.yaml: argocd-cm key resource.customizations.useOpenLibs.apps_Deployment: strconv.ParseBool: parsing "sure": invalid syntax`,
		},
		"eval: missing customizations dir": {
			args: []string{"eval", "-f", healthData + "deployment.yaml", "--customizations-dir", healthData + "nope"},
			want: "customizations library testdata/health/nope: lstat testdata/health/nope: no such file or directory",
		},
		"test: no directory": {
			args: []string{"test"},
			want: "accepts 1 arg(s), received 0",
		},
		"test: missing directory": {
			args: []string{"test", healthData + "nope"},
			want: "customizations library testdata/health/nope: lstat testdata/health/nope: no such file or directory",
		},
		"test: malformed argocd-cm key": {
			args: []string{"test", healthData + "passing", "--argocd-cm", healthData + "bad-key-cm.yaml"},
			want: `testdata/health/bad-key-cm.yaml: argocd-cm key resource.customizations.useOpenLibs.apps_Deployment: strconv.ParseBool: parsing "sure": invalid syntax`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"health"}, tc.args...)...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHealthHelp(t *testing.T) {
	for _, cmd := range []string{"eval", "test"} {
		t.Run(cmd, func(t *testing.T) {
			out, _, err := runCLI(t, "health", cmd, "--help")
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, "health-"+cmd+"-help.txt", strings.ReplaceAll(out, "\r", ""))
		})
	}
}
