package settings

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var fixedNow = func() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC) }

// TestLoadGolden maps each file to objects and warnings and compares them
// with its golden file.
func TestLoadGolden(t *testing.T) {
	for name, file := range map[string]string{
		"a values file with every section":    "values-full.yaml",
		"sections the chart would not create": "values-disabled.yaml",
		"values the chart would write oddly":  "values-odd.yaml",
		"a stream of ConfigMaps and Secrets":  "objects.yaml",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", file), Options{Namespace: "argocd", Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			var objs []any
			for _, o := range s.Objects {
				objs = append(objs, o.Object)
			}
			got, err := yaml.Marshal(map[string]any{"fromValues": s.FromValues, "objects": objs, "warnings": s.Warnings})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(file, ".yaml")+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("settings of %s (-want +got):\n%s", file, diff)
			}
		})
	}
}

func TestLoadRejects(t *testing.T) {
	tests := map[string]struct {
		file string
		want string
	}{
		"a document without a kind":    {"bad-document.yaml", "bad-document.yaml: document 2: apiVersion, kind and metadata.name are required (or give an argo-cd Helm chart values file"},
		"another namespace":            {"other-namespace.yaml", `other-namespace.yaml: ConfigMap argocd-cm is in namespace "gitops"; Argo CD's settings are read in "argocd"`},
		"an object that is no setting": {"not-settings.yaml", "not-settings.yaml: Deployment argocd-server is not a v1 ConfigMap or Secret"},
		"a map where a string goes":    {"bad-extra.yaml", "bad-extra.yaml: configs.secret.extra.nested: a map, want a string, number or boolean"},
		"a missing file":               {"missing.yaml", "read settings:"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", tc.file), Options{Namespace: "argocd", Now: fixedNow})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load(%s) = %v, want an error containing %q", tc.file, err, tc.want)
			}
		})
	}
}

func TestData(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "values-full.yaml"), Options{Namespace: "argocd", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	cm := s.Data(ConfigMap)
	if !strings.HasPrefix(cm["resource.customizations.health.argoproj.io_Application"], "hs = {}") || cm["statusbadge.enabled"] != "true" {
		t.Errorf("argocd-cm data %v", cm)
	}
	if s.Data("absent") != nil {
		t.Error("Data of an absent ConfigMap is not nil")
	}
}
