package hydrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestManifestYAML writes testdata/rendered.yaml's objects as Argo CD's
// hydrator writes manifest.yaml: render order kept, keys sorted,
// two-space indents, "---" between documents (testdata/manifest.yaml).
func TestManifestYAML(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "rendered.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	got, err := manifestYAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifest.yaml:\n%s\nwant:\n%s", got, want)
	}
	if empty, err := manifestYAML(nil); err != nil || len(empty) != 0 {
		t.Errorf("no objects: %q, %v", empty, err)
	}
}

// TestCommitMessage renders the default commit message and argocd-cm's
// sourceHydrator.commitMessageTemplate from the dry commit's metadata.
func TestCommitMessage(t *testing.T) {
	sha := "4cdc77f7a4e77ffae5f4695179aba542a6e47b2b"
	tests := map[string]struct {
		message, template string
		want, wantErr     string
	}{
		"subject only": {message: "bump web\n", want: "4cdc77f: bump web\n\nCo-authored-by: Jo <jo@example.com>\n"},
		"subject and body": {message: "bump web\n\nto 1.27\nfor the CVE\n",
			want: "4cdc77f: bump web\n\nto 1.27\nfor the CVE\n\nCo-authored-by: Jo <jo@example.com>\n"},
		"argocd-cm template": {message: "bump web", template: "hydrate {{ .metadata.drySha }} ({{ .metadata.repoURL }})",
			want: "hydrate " + sha + " (https://git.example.com/dry.git)"},
		"env is not offered":   {message: "x", template: `{{ env "HOME" }}`, wantErr: `argocd-cm sourceHydrator.commitMessageTemplate: template: sourceHydrator.commitMessageTemplate:1: function "env" not defined`},
		"a broken template":    {message: "x", template: "{{ .metadata.drySha", wantErr: "argocd-cm sourceHydrator.commitMessageTemplate: "},
		"Sprig functions work": {message: "bump web", template: "{{ .metadata.subject | upper }}", want: "BUMP WEB"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			subject, body := splitMessage(tc.message)
			m := metadata{RepoURL: "https://git.example.com/dry.git", DrySHA: sha, Author: "Jo <jo@example.com>", Subject: subject, Body: body}
			data, err := m.templateData()
			if err != nil {
				t.Fatal(err)
			}
			got, err := execute(KeyCommitMessageTemplate, tc.template, defaultCommitTemplate, data)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("message %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// TestMetadataFile: hydrator.metadata is indented JSON with Argo CD's
// keys, empty ones left out, HTML characters as they are.
func TestMetadataFile(t *testing.T) {
	got, err := metadata{RepoURL: "https://git.example.com/dry.git", DrySHA: "abc", Subject: "a <b> & c"}.encode()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"repoURL\": \"https://git.example.com/dry.git\",\n  \"drySha\": \"abc\",\n  \"subject\": \"a <b> & c\"\n}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestHydratedPath refuses the root and paths that leave the repository.
func TestHydratedPath(t *testing.T) {
	tests := map[string]struct{ path, want, wantErr string }{
		"a folder":         {path: "guestbook-dev", want: "guestbook-dev"},
		"nested, untidy":   {path: "envs/./dev/", want: "envs/dev"},
		"the root":         {path: ".", wantErr: `app is configured to hydrate to the repository root (branch "env/dev", path ".") which is not allowed`},
		"empty":            {path: "", wantErr: "which is not allowed"},
		"back to the root": {path: "a/..", wantErr: "which is not allowed"},
		"out of the repo":  {path: "../other", wantErr: `syncSource.path "../other" must be a relative path inside the repository`},
		"through a parent": {path: "a/../../b", wantErr: "must be a relative path"},
		"an absolute path": {path: "/etc", wantErr: "must be a relative path"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &v1alpha1.SourceHydrator{SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: tc.path}}
			got, err := hydratedPath(spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
