package appset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/source"
)

// fixtureRepoURL is the repository the fixtures' git generators name; it
// is mirrored to the case's repo/ folder.
const fixtureRepoURL = "https://git.example.com/org/config.git"

// TestGenerate runs each case of testdata/generate: appset.yaml is the
// ApplicationSet, repo/ the tree of fixtureRepoURL, clusters.yaml the
// cluster Secrets, and want.yaml the Applications it must generate, or
// want-error.txt a text the error must contain.
func TestGenerate(t *testing.T) {
	tests := []struct {
		dir  string
		desc string
	}{
		{"list-fasttemplate", "list elements, values.<key>, numbers, unknown parameters left as they are"},
		{"list-gotemplate", "list elements and elementsYaml with Sprig and Argo CD functions"},
		{"gotemplate-missingkey-error", "missingkey=error fails and names the generator and field"},
		{"gotemplate-missingkey-default", "without missingkey=error a missing key renders <no value>"},
		{"fasttemplate-unclosed", "an unclosed {{ is an error"},
		{"git-directories-fasttemplate", "directories with exclude, path, path.basename, path[N]"},
		{"git-directories-gotemplate", "directories with .path.* and pathParamPrefix"},
		{"git-files-fasttemplate", "JSON and YAML files flattened with dotted keys, lists of objects, exclude"},
		{"git-files-gotemplate", "files as nested parameters with .path.filename and values"},
		{"clusters-selector", "clusters with a label selector: the implicit in-cluster is left out"},
		{"clusters-all-gotemplate", "clusters with no selector, metadata as nested maps"},
		{"matrix-git-clusters", "matrix: the second generator uses the first one's parameters"},
		{"matrix-conflict", "matrix with fasttemplate and a parameter defined differently by both"},
		{"merge", "merge by mergeKeys: later generators override matching sets"},
		{"template-override-selector", "a generator's template override and selector post-filter"},
		{"template-patch", "templatePatch renders conditionally and cannot change the project"},
		{"preserve-resources", "preserveResourcesOnDeletion: no resources finalizer added"},
		{"unsupported-generator", "a generator wavecd lacks is an error naming it"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "generate", tt.dir)
			set := readAppSet(t, filepath.Join(dir, "appset.yaml"))
			got, err := Generate(context.Background(), set, fixtureInputs(t, dir))
			if wantErr, ok := readOptional(t, filepath.Join(dir, "want-error.txt")); ok {
				var ge *GenerateError
				if err == nil || !errors.As(err, &ge) || !strings.Contains(err.Error(), strings.TrimSpace(wantErr)) {
					t.Fatalf("%s: error = %v, want a *GenerateError containing %q", tt.desc, err, strings.TrimSpace(wantErr))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.desc, err)
			}
			want := readApps(t, filepath.Join(dir, "want.yaml"))
			if diff := cmp.Diff(want, got.Apps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: apps (-want +got):\n%s", tt.desc, diff)
			}
		})
	}
}

func fixtureInputs(t *testing.T, dir string) Inputs {
	t.Helper()
	mirrors := source.Mirrors{}
	mirrors.Add(fixtureRepoURL, filepath.Join(dir, "repo"))
	in := Inputs{Repos: source.NewRepos(source.ReposOptions{Mirrors: mirrors}), Clusters: cluster.Static{}}
	if raw, ok := readOptional(t, filepath.Join(dir, "clusters.yaml")); ok {
		var secrets []corev1.Secret
		for _, doc := range splitYAML(t, raw) {
			s := corev1.Secret{}
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				t.Fatalf("clusters.yaml: %v", err)
			}
			s.Data = map[string][]byte{}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			secrets = append(secrets, s)
		}
		clusters, err := cluster.FromSecrets(secrets, true)
		if err != nil {
			t.Fatal(err)
		}
		in.Clusters = cluster.Static(clusters)
	}
	return in
}

func readAppSet(t *testing.T, file string) *v1alpha1.ApplicationSet {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict(raw, set); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return set
}

func readApps(t *testing.T, file string) []v1alpha1.Application {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var apps []v1alpha1.Application
	for _, doc := range splitYAML(t, string(raw)) {
		app := v1alpha1.Application{}
		if err := yaml.UnmarshalStrict(doc, &app); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		apps = append(apps, app)
	}
	return apps
}

func readOptional(t *testing.T, file string) (string, bool) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), true
}

func splitYAML(t *testing.T, s string) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) > 0 && strings.TrimSpace(string(doc)) != "---" {
			out = append(out, doc)
		}
	}
}
