package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

func repoTree(t *testing.T) *source.Tree {
	t.Helper()
	tree, err := source.ReadDir(t.Context(), filepath.Join("testdata", "repo"))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func fixtureSet() *Set {
	return NewSet(SetOptions{Dir: filepath.Join("testdata", "plugins")})
}

func str(s string) *string { return &s }

// appEnv is what the render engine hands a plugin for an app "web".
func appEnv(t *testing.T, path string) []string {
	t.Helper()
	build := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: "web"}, {Name: "ARGOCD_APP_NAMESPACE", Value: "shop"},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: "default"}, {Name: "ARGOCD_APP_REVISION", Value: "0123456789abcdef"},
		{Name: "ARGOCD_APP_REVISION_SHORT", Value: "0123456"}, {Name: "ARGOCD_APP_REVISION_SHORT_8", Value: "01234567"},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: "https://git.example/repo.git"}, {Name: "ARGOCD_APP_SOURCE_PATH", Value: path},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: "main"},
	}
	src := &v1alpha1.ApplicationSourcePlugin{
		Env: v1alpha1.Env{{Name: "COLOR", Value: "blue-$ARGOCD_APP_NAME"}},
		Parameters: v1alpha1.ApplicationSourcePluginParameters{
			{Name: "size", String_: str("large")},
			{Name: "images", OptionalMap: &v1alpha1.OptionalMap{Map: map[string]string{"web": "nginx:1"}}},
			{Name: "regions", OptionalArray: &v1alpha1.OptionalArray{Array: []string{"eu", "us"}}},
		},
	}
	env, err := Environ(build, "v1.31.2+k3s1", []string{"v1", "apps/v1"}, src)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// allowedVars are the only variables a plugin run in process may see.
var allowedVars = []string{
	"ARGOCD_APP_NAME", "ARGOCD_APP_NAMESPACE", "ARGOCD_APP_PARAMETERS", "ARGOCD_APP_PROJECT_NAME", "ARGOCD_APP_REVISION",
	"ARGOCD_APP_REVISION_SHORT", "ARGOCD_APP_REVISION_SHORT_8", "ARGOCD_APP_SOURCE_PATH", "ARGOCD_APP_SOURCE_REPO_URL",
	"ARGOCD_APP_SOURCE_TARGET_REVISION", "ARGOCD_ENV_COLOR", "HOME", "KUBE_API_VERSIONS", "KUBE_VERSION", "LANG", "LC_ALL",
	"PARAM_IMAGES_WEB", "PARAM_REGIONS_0", "PARAM_REGIONS_1", "PARAM_SIZE", "PATH", "TMPDIR", "USER", "OLDPWD",
}

func TestGenerateEnvironment(t *testing.T) {
	t.Setenv("WAVECD_TEST_SECRET", "controller-credential")
	tree := repoTree(t)
	out, used, err := fixtureSet().Generate(t.Context(), "env-v1.0", &Request{AppPath: "apps/env", Env: appEnv(t, "apps/env")}, tree)
	if err != nil {
		t.Fatal(err)
	}
	if used != "env-v1.0" {
		t.Errorf("used plugin %q, want env-v1.0", used)
	}
	var cm struct {
		Metadata struct{ Name string }
		Data     map[string]string
	}
	if err := yaml.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	vars := strings.Fields(cm.Data["vars"])
	for _, v := range vars {
		if !slices.Contains(allowedVars, v) {
			t.Errorf("plugin sees variable %s, which Argo CD does not give plugins", v)
		}
	}
	delete(cm.Data, "vars")
	want := map[string]string{
		"init": "initialised", "pwd": "env", "files": "file.txt init.txt ", "namespace": "shop", "project": "default",
		"revision": "0123456", "repo": "https://git.example/repo.git", "path": "apps/env", "target": "main",
		"kube": "1.31.2", "apis": "v1,apps/v1", "color": "blue-web", "size": "large", "tag": "nginx:1", "first": "eu",
		"params": `[{"name":"size","string":"large"},{"map":{"web":"nginx:1"},"name":"images"},{"array":["eu","us"],"name":"regions"}]`,
		"secret": "",
	}
	if diff := cmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("what the plugin saw (-want +got):\n%s", diff)
	}
	if cm.Metadata.Name != "web" {
		t.Errorf("name = %q, want web", cm.Metadata.Name)
	}
	if _, err := os.Stat(filepath.Join("testdata", "repo", "apps", "env", "init.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("init wrote into the repository itself, not into a copy: %v", err)
	}
}

func TestSelect(t *testing.T) {
	tree := repoTree(t)
	tests := map[string]struct {
		name, path string
		want       string
		wantErr    string
	}{
		"named plugin without discovery":           {name: "failing", path: "apps/plain", want: "failing"},
		"named with version":                       {name: "env-v1.0", path: "apps/plain", want: "env-v1.0"},
		"name without the version does not match":  {name: "env", path: "apps/env", wantErr: `could not find cmp-server plugin with name "env" supporting the given repository (plugins in testdata/plugins: cue, deep, env-v1.0, failing, script)`},
		"named plugin whose discovery matches":     {name: "cue", path: "apps/cue", want: "cue"},
		"named plugin whose discovery refuses":     {name: "cue", path: "apps/plain", wantErr: `could not find cmp-server plugin with name "cue" supporting the given repository`},
		"discovery by file name":                   {path: "apps/cue", want: "cue"},
		"discovery by glob":                        {path: "apps/cue/deep", want: "deep"},
		"discovery by command":                     {path: "apps/script", want: "script"},
		"no plugin discovers":                      {path: "apps/plain", wantErr: "could not find plugin supporting the given repository"},
		"plugins without discovery never discover": {path: "apps/env", wantErr: "could not find plugin supporting the given repository"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := fixtureSet().Select(t.Context(), tc.name, &Request{AppPath: tc.path, Env: appEnv(t, tc.path)}, tree)
			if tc.wantErr != "" {
				var nf *NotFoundError
				if !errors.As(err, &nf) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want a NotFoundError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Select = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestMissingFolder: a plugins folder that does not exist holds no plugin
// (an install names the sidecars' folder whether or not it has any), so a
// plugin app gets the missing-plugin error and discovery finds nothing,
// instead of every app failing to render.
func TestMissingFolder(t *testing.T) {
	set := NewSet(SetOptions{Dir: filepath.Join(t.TempDir(), "no-such-folder")})
	tree := repoTree(t)
	for name, plugin := range map[string]string{"named": "cue", "discovered": ""} {
		t.Run(name, func(t *testing.T) {
			_, err := set.Select(t.Context(), plugin, &Request{AppPath: "apps/cue", Env: appEnv(t, "apps/cue")}, tree)
			var nf *NotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("error = %v, want a NotFoundError", err)
			}
		})
	}
}

func TestGenerateFailures(t *testing.T) {
	tree := repoTree(t)
	tests := map[string]struct {
		plugin  string
		limits  Limits
		wantErr string
	}{
		"stderr and exit status kept": {
			plugin:  "generate: {command: [sh, -c, \"echo partial; echo 'something broke' >&2; exit 3\"]}",
			wantErr: "plugin p: generate `sh -c echo partial; echo 'something broke' >&2; exit 3` failed: exit status 3: something broke",
		},
		"timeout": {
			plugin: "generate: {command: [sh, -c, 'sleep 30 & sleep 30']}", limits: Limits{Timeout: 300 * time.Millisecond},
			wantErr: "failed: still running after 300ms",
		},
		"output cap": {
			plugin: "generate: {command: [sh, -c, 'while :; do echo 0123456789abcdef; done']}", limits: Limits{MaxOutput: 4096},
			wantErr: "output too large: printed more than 4096 bytes",
		},
		"init fails": {
			plugin:  "init: {command: [sh, -c, 'exit 1']}\n  generate: {command: [echo]}",
			wantErr: "plugin p: init `sh -c exit 1` failed: exit status 1",
		},
		"missing program": {
			plugin:  "generate: {command: [kasane, show]}",
			wantErr: "plugin p: generate `kasane show` failed: exec: \"kasane\": executable file not found in $PATH",
		},
		"executable bit not kept without preserveFileMode": {
			plugin:  "generate: {command: [./generate.sh]}",
			wantErr: "permission denied",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfgs, err := Parse("test", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  "+tc.plugin+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			l := &local{svc: &Service{Config: cfgs[0], BaseEnv: baseEnv(), Limits: tc.limits}}
			start := time.Now()
			_, err = l.generate(t.Context(), &Request{AppPath: "apps/script"}, tree)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("a failing plugin took %s: its processes were not killed", took)
			}
		})
	}
}

// TestTimeoutKillsChildren checks that a timed-out plugin leaves no
// process behind: its background child must be gone too.
func TestTimeoutKillsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfgs, err := Parse("test", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: {command: [sh, -c, 'sleep 60 & echo $! > \"$PARAM_PIDFILE\"; wait']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := &local{svc: &Service{Config: cfgs[0], BaseEnv: baseEnv(), Limits: Limits{Timeout: 500 * time.Millisecond}}}
	_, err = l.generate(t.Context(), &Request{AppPath: "apps/env", Env: []string{"PARAM_PIDFILE=" + pidFile}}, repoTree(t))
	if err == nil || !strings.Contains(err.Error(), "still running after 500ms") {
		t.Fatalf("error = %v, want a timeout", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join("/proc", strings.TrimSpace(string(data)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile(filepath.Join(proc, "stat"))
		if errors.Is(err, os.ErrNotExist) || err == nil && strings.Contains(string(stat), ") Z ") {
			return // gone, or a zombie waiting for init to reap it
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's child %s still runs after the timeout", proc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestPreserveFileMode(t *testing.T) {
	out, _, err := fixtureSet().Generate(t.Context(), "script", &Request{AppPath: "apps/script"}, repoTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "name: script") {
		t.Errorf("output = %q", out)
	}
}

func TestCanceledContextStopsThePlugin(t *testing.T) {
	cfgs, err := Parse("test", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: {command: [sleep, '60']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	l := &local{svc: &Service{Config: cfgs[0], BaseEnv: baseEnv()}}
	if _, err := l.generate(ctx, &Request{AppPath: "apps/env"}, repoTree(t)); err == nil || !strings.Contains(err.Error(), "context canceled") && !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("error = %v, want the context's", err)
	}
}
