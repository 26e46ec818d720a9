package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runAsCLIEnv makes the test binary behave as the wavecd binary, so a
// plugin can run `wavecd render` without a build of its own.
const runAsCLIEnv = "WAVECD_TEST_RUN_CLI"

func runAsCLI() int {
	root := NewRootCommand(Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	root.SetArgs(os.Args[1:])
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

// wavecdOnPath puts a `wavecd` that runs this test binary as the CLI first
// on PATH, the only variable of ours a plugin sees.
func wavecdOnPath(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", runAsCLIEnv, self)
	if err := os.WriteFile(filepath.Join(dir, "wavecd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestRenderPlugin renders Argo CD's kustomized-helm example shape: a
// plugin whose generate runs helm then kustomize (here `wavecd render`).
func TestRenderPlugin(t *testing.T) {
	wavecdOnPath(t)
	repo := filepath.Join("testdata", "plugins-repo")
	appFile := filepath.Join(repo, "plugins", "kustomized-helm", "app.yaml")
	mirror := "--mirror=https://github.com/acme/plugins=" + repo
	plugins := "--plugins-dir=" + filepath.Join("testdata", "plugins-dir")
	data, err := os.ReadFile(appFile)
	if err != nil {
		t.Fatal(err)
	}
	nix := filepath.Join(t.TempDir(), "nix.yaml")
	if err := os.WriteFile(nix, []byte(strings.Replace(string(data), "name: kustomized-helm", "name: nix", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
	}{
		"helm then kustomize": {
			args: []string{"render", "-f", appFile, mirror, plugins, "--kube-version", "v1.31.2"}, golden: "render-plugin.yaml",
		},
		"plugin not configured": {
			args:    []string{"render", "-f", nix, mirror, plugins},
			wantErr: `could not find cmp-server plugin with name "nix" supporting the given repository (plugins in testdata/plugins-dir: kustomized-helm)`,
		},
		"no plugins folder": {
			args:    []string{"render", "-f", appFile, mirror},
			wantErr: `could not find cmp-server plugin with name "kustomized-helm" supporting the given repository (no plugins folder is set: --plugins-dir)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := runCLI(t, append(tc.args, "--cache-dir", t.TempDir())...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, out)
		})
	}
}
