package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/plugin"
)

func TestPluginSources(t *testing.T) {
	tree := fixtureTree(t, filepath.Join("testdata", "pluginrepo"))
	size := "large"
	tests := map[string]struct {
		pluginsDir string
		src        v1alpha1.ApplicationSource
		want       []string
		wantType   SourceType
		wantErr    string
	}{
		"named plugin": {
			src:  v1alpha1.ApplicationSource{Path: "apps/cfg", Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "tmpl-v2"}},
			want: []string{"ConfigMap/web", "ServiceAccount/web"}, wantType: TypePlugin,
		},
		"plugin found by discovery": {
			src:  v1alpha1.ApplicationSource{Path: "apps/cfg", Plugin: &v1alpha1.ApplicationSourcePlugin{}},
			want: []string{"ConfigMap/web", "ServiceAccount/web"}, wantType: TypePlugin,
		},
		"a source naming no type is offered to plugins first": {
			src:  v1alpha1.ApplicationSource{Path: "apps/cfg"},
			want: []string{"ConfigMap/web", "ServiceAccount/web"}, wantType: TypePlugin,
		},
		"a source no plugin discovers is detected as before": {
			src:  v1alpha1.ApplicationSource{Path: "apps/kust"},
			want: []string{"ConfigMap/plain"}, wantType: TypeKustomize,
		},
		"a plugin that is not configured is an error, never a Kustomization": {
			src:     v1alpha1.ApplicationSource{Path: "apps/kust", Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "kustomized-helm"}},
			wantErr: `could not find cmp-server plugin with name "kustomized-helm" supporting the given repository (plugins in testdata/plugins: tmpl-v2)`,
		},
		"no plugins folder": {
			pluginsDir: "-",
			src:        v1alpha1.ApplicationSource{Path: "apps/cfg", Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "nix"}},
			wantErr:    `could not find cmp-server plugin with name "nix" supporting the given repository (no plugins folder is set: --plugins-dir)`,
		},
		"no plugins folder and no type: plain files": {
			pluginsDir: "-",
			src:        v1alpha1.ApplicationSource{Path: "apps/cfg"},
			want:       []string{"ConfigMap/NAME", "ServiceAccount/NAME"}, wantType: TypeDirectory,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := EngineOptions{CacheSize: -1}
			if tc.pluginsDir != "-" {
				opts.Plugins = plugin.NewSet(plugin.SetOptions{Dir: filepath.Join("testdata", "plugins")})
			}
			src := tc.src
			if src.Plugin != nil {
				src.Plugin.Parameters = v1alpha1.ApplicationSourcePluginParameters{{Name: "size", String_: &size}}
			}
			req := &Request{AppName: "web", Namespace: "shop", Tree: tree, Source: src}
			res, err := NewEngine(opts).Render(t.Context(), req)
			if wantedError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, names(res)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]SourceType{tc.wantType}, res.Types); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
		})
	}
}

// wantedError checks err against want (a substring; "" wants none) and
// reports whether the case ends there, with the error it wanted.
func wantedError(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error = %v, want it to contain %q", err, want)
	case want == "" && err != nil:
		t.Fatal(err)
	}
	return want != ""
}
