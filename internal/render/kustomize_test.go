package render

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

const kubectlPath = "/usr/bin/kubectl"

// kubectlKustomize runs `kubectl kustomize dir`.
func kubectlKustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Fatalf("kubectl is needed to compare kustomize output: %v", err)
	}
	out, err := exec.Command(kubectlPath, "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	objs, err := parseManifests("kubectl kustomize", out, 0)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// normalized sorts objects by kind, namespace and name: kubectl's embedded
// kustomize may be a different version from the library, and the versions
// agree on content but not always on order.
func normalized(objs []*unstructured.Unstructured) []map[string]any {
	sorted := slices.Clone(objs)
	slices.SortFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return objectMaps(sorted)
}

func TestKustomizeMatchesKubectl(t *testing.T) {
	fixture := filepath.Join("testdata", "kustomize")
	tree := fixtureTree(t, fixture)
	tests := map[string]struct {
		path      string
		kustomize *v1alpha1.ApplicationSourceKustomize
		// equivalent is the kustomization.yaml that Argo CD's `kustomize
		// edit` calls would leave in path, written out by hand.
		equivalent string
	}{
		"base":    {path: "base"},
		"overlay": {path: "overlays/prod"},
		"overrides": {
			path: "overlays/prod",
			kustomize: &v1alpha1.ApplicationSourceKustomize{
				NamePrefix: "shop-", NameSuffix: "-v2", Namespace: "prod-eu",
				Images:            v1alpha1.KustomizeImages{"nginx=registry.example.com/nginx:1.27"},
				CommonLabels:      map[string]string{"team": "web"},
				CommonAnnotations: map[string]string{"owner": "web-team"},
				Patches: v1alpha1.KustomizePatches{{
					Patch:  `[{"op": "replace", "path": "/spec/ports/0/port", "value": 8080}]`,
					Target: &v1alpha1.KustomizeSelector{KustomizeResId: v1alpha1.KustomizeResId{KustomizeGvk: v1alpha1.KustomizeGvk{Kind: "Service"}, Name: "web"}},
				}},
				Components: []string{"../../components/monitoring"},
			},
			equivalent: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: prod-eu
namePrefix: shop-
nameSuffix: -v2
resources:
  - ../../base
components:
  - ../../components/monitoring
commonLabels:
  team: web
commonAnnotations:
  owner: web-team
images:
  - name: nginx
    newName: registry.example.com/nginx
    newTag: "1.27"
patches:
  - path: replicas.yaml
  - patch: '[{"op": "replace", "path": "/spec/ports/0/port", "value": 8080}]'
    target:
      kind: Service
      name: web
configMapGenerator:
  - name: settings
    behavior: merge
    literals:
      - mode=prod
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &Request{AppName: "shop", Tree: tree, Source: v1alpha1.ApplicationSource{Path: tc.path, Kustomize: tc.kustomize}}
			got, err := Kustomize{}.Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyDir(t, fixture)
			if tc.equivalent != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.path, "kustomization.yaml"), []byte(tc.equivalent), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := kubectlKustomize(t, filepath.Join(dir, tc.path))
			if diff := gocmp.Diff(normalized(want), normalized(got.Objects)); diff != "" {
				t.Errorf("wavecd differs from kubectl kustomize (-kubectl +wavecd):\n%s", diff)
			}
		})
	}
}

func TestKustomizeErrors(t *testing.T) {
	tree := fixtureTree(t, filepath.Join("testdata", "kustomize"))
	tests := map[string]struct {
		kustomize *v1alpha1.ApplicationSourceKustomize
		wantErr   string
	}{
		"label already set": {
			kustomize: &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"app.kubernetes.io/part-of": "x"}},
			wantErr:   "",
		},
		"missing component": {
			kustomize: &v1alpha1.ApplicationSourceKustomize{Components: []string{"../nope"}},
			wantErr:   "field kustomize.components[0]: component ../nope:",
		},
		"component outside the repository": {
			kustomize: &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../../x"}},
			wantErr:   `field kustomize.components[0]: path "../../../x" leaves the repository root`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := &Request{AppName: "shop", Tree: tree, Source: v1alpha1.ApplicationSource{Path: "base", Kustomize: tc.kustomize}}
			_, err := Kustomize{}.Render(t.Context(), req)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
