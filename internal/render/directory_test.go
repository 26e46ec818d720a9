package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv/folder"
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

// bigConfigMap is ConfigMaps of at least size bytes in all, each holding
// a value of perDoc bytes.
func bigConfigMap(size, perDoc int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  v: %s\n", i, strings.Repeat("x", perDoc))
	}
	return strings.TrimPrefix(b.String(), "---\n")
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
		"JSON object without its closing braces": {
			files: map[string]string{
				"app/good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
				"app/cm.json":   "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"y\"},\n \"data\": {\"a\": \"b\"\n",
			},
			path:    "app",
			wantErr: "app/cm.json:3: yaml: did not find expected ',' or '}'",
		},
		"JSON array with a syntax error": {
			files:   map[string]string{"app/list.json": "[\n {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\"},\n {\"apiVersion\": \"v1\",, }\n]\n"},
			path:    "app",
			wantErr: "app/list.json:3: invalid character ','",
		},
		"YAML that does not parse and does not look like a manifest": {
			files:   map[string]string{"app/notes.yml": "key: [unclosed\n"},
			path:    "app",
			wantErr: "app/notes.yml:1: yaml: did not find expected ',' or ']'",
		},
		"a document over the manifest size limit": {
			files:   map[string]string{"app/big.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n" + bigConfigMap(DefaultMaxManifestSize, DefaultMaxManifestSize)},
			path:    "app",
			wantErr: "app/big.yaml:6: document: 3.1M, over the limit of 3Mi (argocd-cm reposerver.max.manifest.size raises it)",
		},
		"files over the combined directory size limit": {
			files: map[string]string{
				"app/a.yaml": bigConfigMap(DefaultMaxDirectorySize/2, 1<<20), "app/b.yaml": bigConfigMap(DefaultMaxDirectorySize/2, 1<<20),
			},
			path:    "app",
			wantErr: "app/b.yaml: 10.5M, over the limit of 10M (argocd-cm reposerver.max.combined.directory.manifests.size raises it)",
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

func TestDirectorySkipsAreWarnings(t *testing.T) {
	outside := t.TempDir()
	folder.Write(t, outside, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside\n"})
	tests := map[string]struct {
		files        map[string]string
		recurse      bool
		want         []string
		wantWarnings []string
	}{
		"a file that parses and is not an object": {
			files:        map[string]string{"app/cm.yaml": guestbookCM, "app/values.json": `{"replicas": 2}`},
			want:         []string{"ConfigMap/cm"},
			wantWarnings: []string{"skipped app/values.json: not a Kubernetes object: apiVersion is missing"},
		},
		"a list of strings": {
			files:        map[string]string{"app/cm.yaml": guestbookCM, "app/hosts.yaml": "- a\n- b\n"},
			want:         []string{"ConfigMap/cm"},
			wantWarnings: []string{"skipped app/hosts.yaml: not a Kubernetes object: a list, want a mapping"},
		},
		"a symlinked folder inside the repository, recursing": {
			files:        map[string]string{"app/cm.yaml": guestbookCM, "other/x.yaml": guestbookCM, "app/linked": "-> ../other"},
			recurse:      true,
			want:         []string{"ConfigMap/cm"},
			wantWarnings: []string{"skipped app/linked: a symlink to a folder is not followed"},
		},
		"a symlinked folder outside the repository": {
			files: map[string]string{"app/cm.yaml": guestbookCM, "app/linked": "-> " + outside},
			want:  []string{"ConfigMap/cm"},
			wantWarnings: []string{`skipped app/linked: path "app/linked" goes through a symlink that points outside the repository (app/linked -> ` +
				outside + ")"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &Request{AppName: "dir", Tree: treeOf(t, tc.files), Source: v1alpha1.ApplicationSource{
				Path: "app", Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: tc.recurse},
			}}
			res, err := Directory{}.Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(res)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, res.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

const guestbookCM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
