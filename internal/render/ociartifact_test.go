package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

const (
	ociLayerTarGz = "application/vnd.oci.image.layer.v1.tar+gzip"
	ociLayerTar   = "application/vnd.oci.image.layer.v1.tar"
	ociEmptyCfg   = "application/vnd.oci.empty.v1+json"
)

// tarOf packs files (a value starting with "-> " is a symlink), gzipped
// unless plain.
func tarOf(t *testing.T, files map[string]string, plain bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var tw *tar.Writer
	var gz *gzip.Writer
	if plain {
		tw = tar.NewWriter(&buf)
	} else {
		gz = gzip.NewWriter(&buf)
		tw = tar.NewWriter(gz)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		content := files[name]
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			h = &tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

type ociLayer struct {
	mediaType string
	data      []byte
}

// pushArtifact stores an artifact as repository:tag, as `oras push` or
// `flux push artifact` lay it out, and returns its manifest's digest.
func (r *ociRegistry) pushArtifact(t *testing.T, repository, tag, configType string, layers ...ociLayer) string {
	t.Helper()
	descs := make([]ociDescriptor, 0, len(layers))
	for _, l := range layers {
		descs = append(descs, r.blob(l.mediaType, l.data))
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociManifestType, "config": r.blob(configType, []byte("{}")), "layers": descs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.store(repository, tag, manifest)
}

var artifactFiles = map[string]string{
	"apps/web/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
	"apps/web/README.md":           "not a manifest\n",
	"apps/kust/kustomization.yaml": "namePrefix: k-\nresources: [cm.yaml]\n",
	"apps/kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
	"apps/jsonnet/main.jsonnet":    "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: std.extVar('n')}}",
	"apps/escape/passwd.yaml":      "-> /etc/passwd",
	"apps/inner/link/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inner\n",
	"apps/inner/alias.yaml":        "-> link/cm.yaml",
}

func TestOCIArtifactSources(t *testing.T) {
	reg := serveOCI(t, "robot", "pw")
	v1 := reg.pushArtifact(t, "manifests/app", "1.0.0", ociEmptyCfg, ociLayer{ociLayerTarGz, tarOf(t, artifactFiles, false)})
	newer := map[string]string{"apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-1-2\n"}
	v12 := reg.pushArtifact(t, "manifests/app", "1.2.0", ociEmptyCfg, ociLayer{ociLayerTar, tarOf(t, newer, true)})
	reg.pushArtifact(t, "manifests/app", "2.0.0", ociEmptyCfg, ociLayer{ociLayerTarGz, tarOf(t, newer, false)})
	reg.pushArtifact(t, "manifests/two", "1", ociEmptyCfg, ociLayer{ociLayerTarGz, tarOf(t, newer, false)}, ociLayer{ociLayerTar, tarOf(t, newer, true)})
	reg.pushArtifact(t, "manifests/slip", "1", ociEmptyCfg, ociLayer{ociLayerTarGz, tarOf(t, map[string]string{"../../evil.yaml": "x"}, false)})
	reg.pushArtifact(t, "manifests/odd", "1", ociEmptyCfg, ociLayer{"application/vnd.example.layer.v1.tar", tarOf(t, newer, true)})
	repoURL := "oci://" + reg.Host + "/manifests/app"
	creds := source.Credentials{{URL: "oci://" + reg.Host, Username: "robot", Password: "pw", InsecureOCIForceHTTP: true, Prefix: true}}
	tests := map[string]struct {
		url, path, revision string
		dir                 *v1alpha1.ApplicationSourceDirectory
		want                []string
		wantRevision        string
		wantErr             string
	}{
		"directory by tag":             {path: "apps/web", revision: "1.0.0", want: []string{"ConfigMap/web"}, wantRevision: v1},
		"kustomize by digest":          {path: "apps/kust", revision: v1, want: []string{"ConfigMap/k-web"}, wantRevision: v1},
		"semver constraint, tar layer": {path: "apps/web", revision: "~1.0", want: []string{"ConfigMap/web"}, wantRevision: v1},
		"newest matching 1.x":          {path: "apps/web", revision: "^1.0.0", want: []string{"ConfigMap/web-1-2"}, wantRevision: v12},
		"jsonnet":                      {path: "apps/jsonnet", revision: "1.0.0", dir: &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{ExtVars: []v1alpha1.JsonnetVar{{Name: "n", Value: "j"}}}}, want: []string{"ConfigMap/j"}},
		"symlink inside the artifact":  {path: "apps/inner", revision: "1.0.0", want: []string{"ConfigMap/inner"}},
		"symlink out of the artifact":  {path: "apps/escape", revision: "1.0.0", wantErr: `path "apps/escape/passwd.yaml" goes through a symlink that points outside the repository`},
		"path out of the artifact":     {path: "../..", revision: "1.0.0", wantErr: `field path: path "../.." leaves the repository root`},
		"missing tag":                  {path: ".", revision: "9.9.9", wantErr: `no tag matches "9.9.9"`},
		"two content layers":           {url: "oci://" + reg.Host + "/manifests/two", revision: "1", wantErr: "expected only a single oci content layer, got 2"},
		"entry leaving the root":       {url: "oci://" + reg.Host + "/manifests/slip", revision: "1", wantErr: `path "../../evil.yaml" leaves the repository root`},
		"unknown layer media type":     {url: "oci://" + reg.Host + "/manifests/odd", revision: "1", wantErr: "oci layer media type application/vnd.example.layer.v1.tar is not in the list of allowed media types"},
	}
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{}), Charts: source.NewCharts(source.ChartsOptions{}), CacheSize: -1})
	engine.SetCredentials(creds)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				url = repoURL
			}
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{
				RepoURL: url, Path: tc.path, TargetRevision: tc.revision, Directory: tc.dir}}}
			app.Name = "oci"
			res, err := engine.RenderApp(t.Context(), app, Capabilities{})
			if wantedError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, names(res)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if tc.wantRevision != "" && res.Revisions[0] != tc.wantRevision {
				t.Errorf("revision = %s, want the digest %s", res.Revisions[0], tc.wantRevision)
			}
		})
	}
}

func TestOCIArtifactLimitsAndAuth(t *testing.T) {
	reg := serveOCI(t, "robot", "pw")
	reg.pushArtifact(t, "manifests/app", "1", ociEmptyCfg, ociLayer{ociLayerTarGz, tarOf(t, artifactFiles, false)})
	url := "oci://" + reg.Host + "/manifests/app"
	creds := source.Credentials{{URL: "oci://" + reg.Host, Username: "robot", Password: "pw", InsecureOCIForceHTTP: true, Prefix: true}}

	small := source.NewCharts(source.ChartsOptions{Credentials: creds, MaxArtifactSize: 100})
	if _, err := small.Artifact(t.Context(), url, "1"); err == nil || !strings.Contains(err.Error(), "more than 100 bytes unpacked") {
		t.Errorf("size cap: %v", err)
	}
	anonymous := source.NewCharts(source.ChartsOptions{PlainHTTPRegistries: true})
	if _, err := anonymous.Artifact(t.Context(), url, "1"); err == nil || !strings.Contains(err.Error(), "basic credential not found") {
		t.Errorf("without credentials: %v, want the registry to refuse", err)
	}
	mirror := t.TempDir()
	if err := os.WriteFile(filepath.Join(mirror, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mirrored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrors := source.Mirrors{}
	mirrors.Add(url, mirror)
	mirrored := source.NewCharts(source.ChartsOptions{Mirrors: mirrors})
	tree, err := mirrored.Artifact(t.Context(), url, "1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.ReadFile("cm.yaml"); err != nil {
		t.Errorf("mirror: %v", err)
	}
}

func TestOCIHelmChartArtifact(t *testing.T) {
	reg := ociChartRegistry(t, "", "", "0.1.5")
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: "oci://" + reg.Host + "/charts/repochart", Path: ".", TargetRevision: "0.1.5"},
		Destination: v1alpha1.ApplicationDestination{Namespace: "apps"},
	}}
	app.Name = "chart"
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{}), Charts: source.NewCharts(source.ChartsOptions{PlainHTTPRegistries: true})})
	res, err := engine.RenderApp(t.Context(), app, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap/chart"}, names(res)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]SourceType{TypeHelm}, res.Types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
}
