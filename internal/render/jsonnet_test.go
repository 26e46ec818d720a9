package render

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// jsonnetOpts are the options of the testdata/jsonnet fixtures: a TLA as a
// string and two as code, an ext var as a string with a build variable and
// one as code, and a library folder.
var jsonnetOpts = v1alpha1.ApplicationSourceJsonnet{
	TLAs: []v1alpha1.JsonnetVar{
		{Name: "image", Value: "nginx:$ARGOCD_APP_NAME"},
		{Name: "replicas", Value: "1 + 2", Code: true},
		{Name: "labels", Value: "{team: 'web'}", Code: true},
	},
	ExtVars: []v1alpha1.JsonnetVar{
		{Name: "env", Value: "prod-$ARGOCD_APP_NAMESPACE-$$"},
		{Name: "limit", Value: "21", Code: true},
	},
	Libs: []string{"vendor"},
}

// TestJsonnetMatchesCLI evaluates each fixture file as a Directory source
// would and compares the JSON text with what the jsonnet CLI of the same
// go-jsonnet version prints for the same arguments.
func TestJsonnetMatchesCLI(t *testing.T) {
	root := filepath.Join("testdata", "jsonnet")
	tree := fixtureTree(t, root)
	req := &Request{AppName: "guestbook", Namespace: "shop", Tree: tree,
		Source: v1alpha1.ApplicationSource{Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts}}}
	eval, err := newJsonnetEval(req, "app")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-J", "app", "-J", "vendor",
		"--tla-str", "image=nginx:guestbook", "--tla-code", "replicas=1 + 2", "--tla-code", "labels={team: 'web'}",
		"--ext-str", "env=prod-shop-$", "--ext-code", "limit=21"}
	for _, file := range []string{"app/main.jsonnet", "app/sub/nested.jsonnet"} {
		t.Run(file, func(t *testing.T) {
			got, err := eval.evaluate(t.Context(), file)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(jsonnetBin, append(args, file)...)
			cmd.Dir = root
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("jsonnet CLI: %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("output differs from the jsonnet CLI (-cli +ours):\n%s", diff)
			}
		})
	}
}

func TestJsonnetDirectory(t *testing.T) {
	tree := fixtureTree(t, filepath.Join("testdata", "jsonnet"))
	tests := map[string]struct {
		dir  v1alpha1.ApplicationSourceDirectory
		want []string
	}{
		"top folder, .libsonnet left out": {
			dir:  v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts},
			want: []string{"Deployment/web", "ConfigMap/web-config"},
		},
		"recurse: nested arrays flattened, null skipped, List expanded": {
			dir:  v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts, Recurse: true},
			want: []string{"Deployment/web", "ConfigMap/web-config", "Service/web", "ServiceAccount/web"},
		},
		"exclude": {
			dir:  v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts, Recurse: true, Exclude: "main.jsonnet"},
			want: []string{"Service/web", "ServiceAccount/web"},
		},
	}
	engine := NewEngine(EngineOptions{CacheSize: -1})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := tc.dir
			req := &Request{AppName: "guestbook", Namespace: "shop", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "app", Directory: &dir}}
			res, err := engine.Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(res)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJsonnetValues(t *testing.T) {
	tree := fixtureTree(t, filepath.Join("testdata", "jsonnet"))
	req := &Request{AppName: "guestbook", Namespace: "shop", Tree: tree,
		Source: v1alpha1.ApplicationSource{Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts}}}
	res, err := Directory{}.Render(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(res.Objects[1].Object["data"])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"limit":"42","notes.txt":"hello from a text file\n"}`; string(got) != want {
		t.Errorf("ConfigMap data = %s, want %s", got, want)
	}
	labels := res.Objects[0].GetLabels()
	if diff := cmp.Diff(map[string]string{"team": "web", "env": "prod-shop-$"}, labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestJsonnetErrors(t *testing.T) {
	tests := map[string]struct {
		files   map[string]string
		opts    v1alpha1.ApplicationSourceJsonnet
		wantErr string
	}{
		"import climbing out of the repository": {
			files:   map[string]string{"app/main.jsonnet": "import '../../etc/hostname'"},
			wantErr: `import "../../etc/hostname": path "../../etc/hostname" leaves the repository root`,
		},
		"absolute import": {
			files:   map[string]string{"app/main.jsonnet": "importstr '/etc/hostname'"},
			wantErr: `path "/etc/hostname" is absolute`,
		},
		"import through a symlink out of the repository": {
			files:   map[string]string{"app/main.jsonnet": "importstr 'etc/hostname'", "app/etc": "-> /etc"},
			wantErr: `path "etc/hostname" goes through a symlink that points outside the repository`,
		},
		"lib outside the repository": {
			files:   map[string]string{"app/main.jsonnet": "{}"},
			opts:    v1alpha1.ApplicationSourceJsonnet{Libs: []string{"../vendor"}},
			wantErr: `field directory.jsonnet.libs[0]: path "../vendor" leaves the repository root`,
		},
		"missing import": {
			files:   map[string]string{"app/main.jsonnet": "import 'nope.libsonnet'"},
			wantErr: `couldn't open import "nope.libsonnet": no match locally or in the Jsonnet library paths`,
		},
		"runtime error names the file": {
			files:   map[string]string{"app/main.jsonnet": "error 'boom'"},
			wantErr: "app/main.jsonnet: evaluate jsonnet: RUNTIME ERROR: boom",
		},
		"output that is not an object": {
			files:   map[string]string{"app/main.jsonnet": "[{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'a'}}, 'text']"},
			wantErr: "app/main.jsonnet: item [1]: not a Kubernetes object: a string, want a mapping",
		},
		"object without kind": {
			files:   map[string]string{"app/main.jsonnet": "{apiVersion: 'v1'}"},
			wantErr: "app/main.jsonnet: not a Kubernetes object: kind is missing",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tree := treeOf(t, tc.files)
			opts := tc.opts
			req := &Request{AppName: "dir", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: opts}}}
			_, err := Directory{}.Render(t.Context(), req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// A Jsonnet program's output counts against the directory's limit like a
// file read: a few bytes of source can print a huge document.
func TestJsonnetOutputLimit(t *testing.T) {
	tree := treeOf(t, map[string]string{"app/main.jsonnet": `{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'big'},
		data: {x: std.join('', std.makeArray(5000, function(i) 'x'))}}`})
	req := &Request{AppName: "dir", Tree: tree, Limits: Limits{MaxDirectorySize: 1000},
		Source: v1alpha1.ApplicationSource{Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{}}}
	_, err := Directory{}.Render(t.Context(), req)
	var size *SizeError
	if !errors.As(err, &size) || size.What != "app/main.jsonnet (jsonnet output)" {
		t.Fatalf("error = %v, want the Jsonnet output over the directory limit", err)
	}
}

// TestJsonnetChild checks that an evaluation that never ends, or that
// crashes, ends only the child process it runs in.
func TestJsonnetChild(t *testing.T) {
	tree := treeOf(t, map[string]string{"app/main.jsonnet": "local f(n) = if n < 0 then 0 else f(n + 1) tailstrict; f(0)"})
	req := &Request{AppName: "dir", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "app"}}
	eval, err := newJsonnetEval(req, "app")
	if err != nil {
		t.Fatal(err)
	}
	eval.timeout = 500 * time.Millisecond
	_, err = eval.evaluateAll(t.Context(), []string{"app/main.jsonnet"})
	if err == nil || !strings.Contains(err.Error(), "app/main.jsonnet: evaluate jsonnet: still running after 500ms") {
		t.Fatalf("error = %v, want a timeout naming the file", err)
	}

	crash := filepath.Join(t.TempDir(), "crash")
	if err := os.WriteFile(crash, []byte("#!/bin/sh\ncat >/dev/null\necho 'fatal error: stack overflow' >&2\necho 'goroutine 1 [running]:' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = eval.evaluateInChild(t.Context(), crash, []string{"app/main.jsonnet"})
	if err == nil || !strings.Contains(err.Error(), "app/main.jsonnet: evaluate jsonnet: the evaluation failed (exit status 2): fatal error: stack overflow") {
		t.Fatalf("error = %v, want the crash's first line", err)
	}
}

// BenchmarkJsonnet measures one .jsonnet file evaluated in a child process
// (what wavecd does) and in process.
func BenchmarkJsonnet(b *testing.B) {
	tree := fixtureTree(b, filepath.Join("testdata", "jsonnet"))
	req := &Request{AppName: "guestbook", Namespace: "shop", Tree: tree,
		Source: v1alpha1.ApplicationSource{Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: jsonnetOpts}}}
	eval, err := newJsonnetEval(req, "app")
	if err != nil {
		b.Fatal(err)
	}
	files := []string{"app/main.jsonnet"}
	b.Run("child", func(b *testing.B) {
		for b.Loop() {
			if _, err := eval.evaluateAll(b.Context(), files); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := eval.evaluate(b.Context(), files[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
