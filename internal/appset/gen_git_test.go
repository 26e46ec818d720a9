package appset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// writeTree creates files (content) and symlinks (a "->target" content)
// under a new folder and returns it as a source tree.
func writeTree(t *testing.T, files map[string]string) (*source.Tree, string) {
	t.Helper()
	root := t.TempDir()
	folder.Write(t, filepath.Join(root, "repo"), files)
	tree, err := source.ReadDir(context.Background(), filepath.Join(root, "repo"))
	if err != nil {
		t.Fatal(err)
	}
	return tree, root
}

func TestMatchFiles(t *testing.T) {
	tree, _ := writeTree(t, map[string]string{
		"cluster-charts/cluster1/mychart/values.yaml":                   "a: 1",
		"cluster-charts/cluster1/mychart/charts/mysubchart/values.yaml": "a: 2",
		"cluster-charts/cluster2/other/values.yaml":                     "a: 3",
		"some-path/top.yaml":                                            "a: 4",
		"some-path/deeper/nested.yaml":                                  "a: 5",
		"apps/a.json":                                                   "{}",
		"apps/b.json":                                                   "{}",
		"apps/linked.json":                                              "->a.json",
		"apps/dir-link.json":                                            "->../some-path",
	})
	tests := []struct {
		desc        string
		items       []v1alpha1.GitFileGeneratorItem
		newGlobbing bool
		want        []string
	}{
		{
			desc:  "default globbing: * crosses directories, as git ls-files does",
			items: []v1alpha1.GitFileGeneratorItem{{Path: "cluster-charts/*/*/values.yaml"}},
			want: []string{
				"cluster-charts/cluster1/mychart/charts/mysubchart/values.yaml",
				"cluster-charts/cluster1/mychart/values.yaml",
				"cluster-charts/cluster2/other/values.yaml",
			},
		},
		{
			desc:        "new globbing: * stays in one directory",
			items:       []v1alpha1.GitFileGeneratorItem{{Path: "cluster-charts/*/*/values.yaml"}},
			newGlobbing: true,
			want:        []string{"cluster-charts/cluster1/mychart/values.yaml", "cluster-charts/cluster2/other/values.yaml"},
		},
		{
			desc:  "default globbing: some-path/*.yaml reaches deeper files",
			items: []v1alpha1.GitFileGeneratorItem{{Path: "some-path/*.yaml"}},
			want:  []string{"some-path/deeper/nested.yaml", "some-path/top.yaml"},
		},
		{
			desc:        "new globbing: ** matches zero or more directories",
			items:       []v1alpha1.GitFileGeneratorItem{{Path: "some-path/**/*.yaml"}},
			newGlobbing: true,
			want:        []string{"some-path/deeper/nested.yaml", "some-path/top.yaml"},
		},
		{
			desc:  "exclude wins; a symlink to a file is a file, one to a directory is not",
			items: []v1alpha1.GitFileGeneratorItem{{Path: "apps/*.json"}, {Path: "apps/b.json", Exclude: true}},
			want:  []string{"apps/a.json", "apps/linked.json"},
		},
	}
	for _, tt := range tests {
		got, err := matchFiles(tree, tt.items, tt.newGlobbing)
		if err != nil {
			t.Fatalf("%s: %v", tt.desc, err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.desc, diff)
		}
	}
}

func TestMatchDirectories(t *testing.T) {
	tree, _ := writeTree(t, map[string]string{
		"d/e/f.yaml":      "",
		"d/f/f.yaml":      "",
		"d/g/f.yaml":      "",
		"d/.hidden/x":     "",
		"d/link":          "->e",
		"top/f.yaml":      "",
		".github/ci.yaml": "",
	})
	tests := []struct {
		desc  string
		items []v1alpha1.GitDirectoryGeneratorItem
		want  []string
	}{
		{
			desc:  "exclude rules take precedence whatever their order",
			items: []v1alpha1.GitDirectoryGeneratorItem{{Path: "d/[fg]", Exclude: true}, {Path: "d/*"}},
			want:  []string{"d/e"},
		},
		{
			desc:  "the repository root: * lists top-level directories, hidden ones skipped",
			items: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*"}},
			want:  []string{"d", "top"},
		},
		{
			desc:  "an include rule cannot bring back a directory an exclude rule matches",
			items: []v1alpha1.GitDirectoryGeneratorItem{{Path: "d/e"}, {Path: "d/*", Exclude: true}},
			want:  nil,
		},
	}
	for _, tt := range tests {
		got, err := matchDirectories(tree, tt.items)
		if err != nil {
			t.Fatalf("%s: %v", tt.desc, err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.desc, diff)
		}
	}
	if _, err := matchDirectories(tree, []v1alpha1.GitDirectoryGeneratorItem{{Path: "d/["}}); err == nil {
		t.Error("a malformed pattern must be an error, not a silent skip")
	}
}

// TestGitFileSymlinkEscape: a file generator never reads a file through a
// symlink that leaves the repository.
func TestGitFileSymlinkEscape(t *testing.T) {
	_, root := writeTree(t, map[string]string{
		"config/ok.json":     `{"name": "ok"}`,
		"config/secret.json": "->../../outside.json",
	})
	if err := os.WriteFile(filepath.Join(root, "outside.json"), []byte(`{"name": "stolen"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrors := source.Mirrors{}
	mirrors.Add(fixtureRepoURL, filepath.Join(root, "repo"))
	set := &v1alpha1.ApplicationSet{Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{Git: &v1alpha1.GitGenerator{
			RepoURL: fixtureRepoURL, Files: []v1alpha1.GitFileGeneratorItem{{Path: "config/*.json"}},
		}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{name}}"}},
	}}
	_, err := Generate(context.Background(), set, Inputs{Repos: source.NewRepos(source.ReposOptions{Mirrors: mirrors})})
	var pe *source.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v, want a *source.PathError", err)
	}
	if pe.Reason == "" || !strings.Contains(err.Error(), "config/secret.json") {
		t.Errorf("error %v does not name the symlink", err)
	}
}
