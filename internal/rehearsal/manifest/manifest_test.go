package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// namespace is the controller's namespace of the tests.
const namespace = "argocd"

func TestReadRoot(t *testing.T) {
	twoRoots, err := os.ReadFile("testdata/two-roots.yaml")
	if err != nil {
		t.Fatal(err)
	}
	appsets, err := os.ReadFile("testdata/appsets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		manifest string
		wantErr  string
		names    []string
		sets     []string
		mirrored []string
		branches []string
	}{
		"apps, a project, Git and chart sources": {
			manifest: string(twoRoots),
			names:    []string{"root", "addons"},
			mirrored: []string{"https://github.com/org/gitops", "https://github.com/org/addons.git"},
			branches: []string{"release-1"},
		},
		"ApplicationSets, templated and not": {
			manifest: string(appsets),
			sets:     []string{"cluster-addons", "workloads"},
			mirrored: []string{"https://github.com/org/workloads.git", "https://github.com/org/platform.git"},
			branches: []string{"release-2", "main"},
		},
		"no Application": {
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			wantErr:  "holds no argoproj.io Application or ApplicationSet",
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
			objs, err := ReadRoot(path, namespace)
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
			for _, a := range Apps(objs) {
				names = append(names, a.GetName())
				if a.GetNamespace() != namespace {
					t.Errorf("%s in namespace %q", a.GetName(), a.GetNamespace())
				}
			}
			if diff := cmp.Diff(tc.names, names); diff != "" {
				t.Errorf("root apps (-want +got):\n%s", diff)
			}
			var sets []string
			for _, s := range Sets(objs) {
				sets = append(sets, s.GetName())
			}
			if diff := cmp.Diff(tc.sets, sets); diff != "" {
				t.Errorf("root ApplicationSets (-want +got):\n%s", diff)
			}
			m := Mirrors(objs, "/snapshot")
			for _, url := range tc.mirrored {
				if p, ok := m.Lookup(url); !ok || p != "/snapshot" {
					t.Errorf("mirror of %s = %q, %v", url, p, ok)
				}
			}
			if _, ok := m.Lookup("https://charts.example.com"); ok {
				t.Error("a Helm chart repository is mirrored to the snapshot")
			}
			if diff := cmp.Diff(tc.branches, Branches(objs)); diff != "" {
				t.Errorf("branches (-want +got):\n%s", diff)
			}
		})
	}
}
