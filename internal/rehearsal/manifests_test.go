package rehearsal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const twoRoots = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: platform}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  source: {repoURL: https://github.com/org/gitops.git, targetRevision: release-1, path: apps}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: addons}
spec:
  sources:
  - {repoURL: https://github.com/org/addons, targetRevision: HEAD, path: .}
  - {repoURL: https://charts.example.com, chart: redis, targetRevision: 1.2.3}
  - {repoURL: https://github.com/org/gitops.git, targetRevision: 0123abcd, path: values}
`

func TestReadRoot(t *testing.T) {
	tests := map[string]struct {
		manifest string
		wantErr  string
		names    []string
		mirrored []string
		branches []string
	}{
		"apps, a project, Git and chart sources": {
			manifest: twoRoots,
			names:    []string{"root", "addons"},
			mirrored: []string{"https://github.com/org/gitops", "https://github.com/org/addons.git"},
			branches: []string{"release-1"},
		},
		"no Application": {
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			wantErr:  "holds no argoproj.io Application",
		},
		"another namespace": {
			manifest: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: r, namespace: gitops}\n",
			wantErr:  `is in namespace "gitops"`,
		},
		"missing name": {
			manifest: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {}\n",
			wantErr:  "metadata.name are required",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "root.yaml")
			if err := os.WriteFile(path, []byte(tc.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			objs, err := readRoot(path, Namespace)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range rootApps(objs) {
				names = append(names, a.GetName())
				if a.GetNamespace() != Namespace {
					t.Errorf("%s in namespace %q", a.GetName(), a.GetNamespace())
				}
			}
			if diff := cmp.Diff(tc.names, names); diff != "" {
				t.Errorf("root apps (-want +got):\n%s", diff)
			}
			m := rootMirrors(objs, "/snapshot")
			for _, url := range tc.mirrored {
				if p, ok := m.Lookup(url); !ok || p != "/snapshot" {
					t.Errorf("mirror of %s = %q, %v", url, p, ok)
				}
			}
			if _, ok := m.Lookup("https://charts.example.com"); ok {
				t.Error("a Helm chart repository is mirrored to the snapshot")
			}
			if diff := cmp.Diff(tc.branches, rootBranches(objs)); diff != "" {
				t.Errorf("branches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadSettings(t *testing.T) {
	tests := map[string]struct {
		file    string
		wantErr string
	}{
		"the example's Lua settings": {file: "../../examples/healthcheck-poc/settings/app-health-lua.yaml"},
		"Argo CD defaults":           {file: "../../examples/healthcheck-poc/settings/argo-default.yaml"},
		"an argo-cd values file":     {file: "../../examples/healthcheck-poc/settings/argocd-values.yaml"},
		"an Application":             {file: "../../examples/healthcheck-poc/apps/root.yaml", wantErr: "is not a v1 ConfigMap or Secret"},
		"a missing file":             {file: "nope.yaml", wantErr: "no such file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := readSettings(tc.file, Namespace)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(s.Objects) != 1 || s.Objects[0].GetName() != "argocd-cm" || s.Objects[0].GetNamespace() != Namespace {
				t.Fatalf("readSettings = %v, %v; want argocd-cm", s, err)
			}
		})
	}
}

func TestIsRemoteURL(t *testing.T) {
	for in, want := range map[string]bool{
		"https://github.com/org/repo.git": true,
		"git@github.com:org/repo.git":     true,
		"ssh://git@host/repo":             true,
		"file:///tmp/repo":                false,
		"examples/healthcheck-poc":        false,
		"/abs/path":                       false,
		".":                               false,
	} {
		if got := isRemoteURL(in); got != want {
			t.Errorf("isRemoteURL(%q) = %v, want %v", in, got, want)
		}
	}
}
