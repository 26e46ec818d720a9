package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// names lists objects as kind/name.
func names(res *Result) []string {
	var out []string
	for _, o := range res.Objects {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestDirectory(t *testing.T) {
	tree := fixtureTree(t, filepath.Join("testdata", "directory"))
	top := []string{"Namespace/shop", "ConfigMap/settings", "ServiceAccount/robot", "Secret/a", "Secret/b"}
	tests := map[string]struct {
		dir          *v1alpha1.ApplicationSourceDirectory
		want         []string
		wantWarnings []string
	}{
		"top folder only": {
			want:         top,
			wantWarnings: []string{"skipped values.yaml: not a Kubernetes object: apiVersion is missing"},
		},
		"recurse": {
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			want: append(append([]string{}, top...), "ConfigMap/deeper", "Service/web"),
		},
		"recurse with exclude": {
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Exclude: "{sub/deeper/*,values.yaml}"},
			want: append(append([]string{}, top...), "Service/web"),
		},
		"include": {
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.json"},
			want: []string{"ServiceAccount/robot", "Secret/a", "Secret/b"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &Request{AppName: "dir", Tree: tree, Source: v1alpha1.ApplicationSource{Directory: tc.dir}}
			res, err := Directory{}.Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(res)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if tc.wantWarnings != nil {
				if diff := cmp.Diff(tc.wantWarnings, res.Warnings); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDirectoryErrors(t *testing.T) {
	tests := map[string]struct {
		files   map[string]string
		path    string
		wantErr string
	}{
		"broken manifest names file and line": {
			files:   map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: [unclosed\n"},
			path:    "app",
			wantErr: "app/cm.yaml:9: yaml: did not find expected ',' or ']'",
		},
		"object without kind next to a good one": {
			files:   map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nmetadata:\n  name: y\n"},
			path:    "app",
			wantErr: "app/cm.yaml:6: not a Kubernetes object: kind is missing",
		},
		"path leaves the repository": {
			files: map[string]string{"app/cm.yaml": "a: b\n"}, path: "../outside",
			wantErr: `field path: path "../outside" leaves the repository root`,
		},
		"path is absolute": {
			files: map[string]string{"app/cm.yaml": "a: b\n"}, path: "/etc",
			wantErr: `field path: path "/etc" is absolute; use a path relative to the source`,
		},
		"symlinked manifest pointing at /etc": {
			files:   map[string]string{"app/passwd.yaml": "-> /etc/passwd"},
			path:    "app",
			wantErr: `path "app/passwd.yaml" goes through a symlink that points outside the repository (app/passwd.yaml -> /etc/passwd)`,
		},
		"path through a symlink to /": {
			files:   map[string]string{"root": "-> /"},
			path:    "root/etc",
			wantErr: `field path: path "root/etc" goes through a symlink that points outside the repository (root -> /)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tree := treeOf(t, tc.files)
			req := &Request{AppName: "dir", Tree: tree, Source: v1alpha1.ApplicationSource{Path: tc.path}}
			_, err := Directory{}.Render(t.Context(), req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
