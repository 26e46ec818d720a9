package application

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeManifests decodes operation.sync.manifests as a local sync
// sends them: one object each, with an error that names the manifest.
func TestDecodeManifests(t *testing.T) {
	tests := map[string]struct {
		files   []string
		want    []string // kind/name of each object
		wantErr string
	}{
		"yaml and json":      {files: []string{"configmap.yaml", "hook.json"}, want: []string{"ConfigMap/settings", "Job/migrate-"}},
		"no kind":            {files: []string{"configmap.yaml", "no-kind.yaml"}, wantErr: "operation.sync.manifests[1]: kind is missing"},
		"no apiVersion":      {files: []string{"no-api-version.yaml"}, wantErr: "operation.sync.manifests[0]: apiVersion is missing"},
		"no name":            {files: []string{"no-name.yaml"}, wantErr: "operation.sync.manifests[0]: ConfigMap: metadata.name is missing"},
		"a list":             {files: []string{"list.yaml"}, wantErr: "operation.sync.manifests[0]: List is a list: give one object per manifest"},
		"not yaml":           {files: []string{"broken.yaml"}, wantErr: "operation.sync.manifests[0]: error converting YAML to JSON"},
		"an empty manifest":  {files: []string{"empty.yaml"}, wantErr: "operation.sync.manifests[0]: holds no object"},
		"no manifest at all": {wantErr: "operation.sync.manifests is empty"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var manifests []string
			for _, f := range tc.files {
				b, err := os.ReadFile(filepath.Join("testdata", "manifests", f))
				if err != nil {
					t.Fatal(err)
				}
				manifests = append(manifests, string(b))
			}
			objs, err := DecodeManifests(manifests)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				n := o.GetName()
				if n == "" {
					n = o.GetGenerateName()
				}
				got = append(got, o.GetKind()+"/"+n)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("objects %v, want %v", got, tc.want)
			}
		})
	}
}
