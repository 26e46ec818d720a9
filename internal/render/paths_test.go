package render

import (
	"strings"
	"testing"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// treeOf writes files (content, or "-> target" for a symlink) into a
// temporary folder and returns its tree.
func treeOf(t *testing.T, files map[string]string) *source.Tree {
	t.Helper()
	dir := t.TempDir()
	folder.Write(t, dir, files)
	return fixtureTree(t, dir)
}

const tinyChart = "apiVersion: v2\nname: tiny\nversion: 0.1.0\n"

func TestPathsCannotLeaveTheRepository(t *testing.T) {
	chart := map[string]string{
		"chart/Chart.yaml":            tinyChart,
		"chart/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"links/escape.yaml":           "-> ../../outside.yaml",
		"links/root":                  "-> /",
		"badchart/Chart.yaml":         tinyChart,
		"badchart/escape.yaml":        "-> ../../outside.yaml",
		"kust/kustomization.yaml":     "resources:\n  - ../../outside\n",
		"kustlink/kustomization.yaml": "resources:\n  - link/cm.yaml\n",
		"kustlink/link":               "-> /etc",
		"kustabs/kustomization.yaml":  "resources:\n  - /etc/kubernetes\n",
	}
	tests := map[string]struct {
		src     v1alpha1.ApplicationSource
		wantErr string
	}{
		"value file ../../etc/passwd": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../../etc/passwd"}}},
			wantErr: `field helm.valueFiles[0]: path "../../etc/passwd" leaves the repository root`,
		},
		"value file through a symlink out": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../links/escape.yaml"}}},
			wantErr: `field helm.valueFiles[0]: path "../links/escape.yaml" goes through a symlink that points outside the repository`,
		},
		"value file under a symlink to /": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"../links/root/etc/passwd"}}},
			wantErr: `field helm.valueFiles[0]: path "../links/root/etc/passwd" goes through a symlink that points outside the repository`,
		},
		"value file as URL": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"https://example.com/values.yaml"}}},
			wantErr: `path "https://example.com/values.yaml" is a URL`,
		},
		"missing value file": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"nope.yaml"}}},
			wantErr: "field helm.valueFiles[0]: nope.yaml: file not found",
		},
		"file parameter out of the repo": {
			src:     v1alpha1.ApplicationSource{Path: "chart", Helm: &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "x", Path: "../../etc/shadow"}}}},
			wantErr: `field helm.fileParameters[0]: path "../../etc/shadow" leaves the repository root`,
		},
		"chart with a symlink out of the repo inside": {
			src:     v1alpha1.ApplicationSource{Path: "badchart"},
			wantErr: `chart badchart: path "badchart/escape.yaml" goes through a symlink that points outside the repository (badchart/escape.yaml -> ../../outside.yaml)`,
		},
		"kustomize resource outside the repo": {
			src:     v1alpha1.ApplicationSource{Path: "kust"},
			wantErr: `kust/kustomization.yaml: resources: path "../../outside" leaves the repository root`,
		},
		"kustomize resource through a symlink to /etc": {
			src:     v1alpha1.ApplicationSource{Path: "kustlink"},
			wantErr: `kustlink/kustomization.yaml: resources: path "link/cm.yaml" goes through a symlink that points outside the repository`,
		},
		"kustomize absolute resource": {
			src:     v1alpha1.ApplicationSource{Path: "kustabs"},
			wantErr: `kustabs/kustomization.yaml: resources: path "/etc/kubernetes" is absolute`,
		},
	}
	tree := treeOf(t, chart)
	engine := NewEngine(EngineOptions{CacheSize: -1})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := engine.Render(t.Context(), &Request{AppName: "x", Tree: tree, Source: tc.src, Capabilities: Capabilities{KubeVersion: testKubeVersion}})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
