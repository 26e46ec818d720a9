package deploy_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cli"
	"github.com/wavecd/wavecd/internal/health"
)

const (
	exampleDir    = "../examples/self-managed"
	exampleApp    = exampleDir + "/wavecd.yaml"
	exampleValues = exampleDir + "/values.yaml"
	appHealthKey  = "resource.customizations.health.argoproj.io_Application"
)

// TestSelfManagedExample renders the example Application the way the
// controller will (wavecd's own renderer, the repository served from a
// copy of this one) and checks it yields exactly what the seeding
// `helm install -f values.yaml` created: the handover changes nothing, and
// argocd-cm carries the Application health check.
func TestSelfManagedExample(t *testing.T) {
	app := readApplication(t, exampleApp)
	src := app.Spec.Source
	if src == nil || src.Path != "deploy/helm/wavecd" || src.Helm == nil || src.Helm.ReleaseName != releaseName {
		t.Fatalf("the example's source = %+v, want the chart at deploy/helm/wavecd with release name %s", src, releaseName)
	}
	if app.Namespace != releaseNamespace || app.Spec.Destination.Namespace != releaseNamespace {
		t.Errorf("the example lives in %q and deploys to %q, want %q for both", app.Namespace, app.Spec.Destination.Namespace, releaseNamespace)
	}
	if app.Spec.SyncPolicy == nil || app.Spec.SyncPolicy.Automated == nil {
		t.Error("the example does not sync automatically")
	}

	byWavecd := renderWithWavecd(t, exampleApp, src.RepoURL)
	byHelm := map[string]any{}
	for _, d := range renderChart(t, readValues(t, exampleValues)).docs {
		byHelm[d.key()] = jsonRoundTrip(t, d.obj.Object)
	}
	if diff := cmp.Diff(byHelm, byWavecd); diff != "" {
		t.Errorf("the Application renders other objects than helm install -f %s (-helm +wavecd):\n%s", exampleValues, diff)
	}

	cm, ok := byWavecd["ConfigMap/argocd/argocd-cm"].(map[string]any)
	if !ok {
		t.Fatal("the Application renders no argocd-cm")
	}
	data, _ := cm["data"].(map[string]any)
	lua, _ := data[appHealthKey].(string)
	if !strings.Contains(lua, "obj.status.health.status") {
		t.Fatalf("argocd-cm %s = %q, want the Application health check", appHealthKey, lua)
	}
	settings := map[string]string{}
	for k, v := range data {
		settings[k], _ = v.(string)
	}
	if _, err := health.New(health.Options{Settings: settings}); err != nil {
		t.Errorf("the controller refuses the example's argocd-cm: %v", err)
	}
}

func readApplication(t *testing.T, path string) *v1alpha1.Application {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := yaml.UnmarshalStrict(data, app); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return app
}

// renderWithWavecd runs `wavecd render -f app` with repoURL served from a
// copy of the chart and the example, and returns the objects by key.
func renderWithWavecd(t *testing.T, app, repoURL string) map[string]any {
	t.Helper()
	repo := t.TempDir()
	for _, dir := range []string{"deploy/helm/wavecd", "examples/self-managed"} {
		copyTree(t, filepath.Join("..", dir), filepath.Join(repo, dir))
	}
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs([]string{"render", "-f", app, "--mirror", repoURL + "=" + repo, "--cache-dir", t.TempDir(), "-o", "yaml"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("wavecd render: %v\n%s", err, errOut.String())
	}
	docs, err := splitManifest(out.String())
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]any{}
	for _, d := range docs {
		objs[d.key()] = jsonRoundTrip(t, d.obj.Object)
	}
	return objs
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		outFile, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(outFile, in); err != nil {
			outFile.Close()
			return err
		}
		return outFile.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}
