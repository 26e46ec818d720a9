package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// Objects of the diff fixture: Git wants settings blue, a new ConfigMap and
// a changed Secret; the cluster has settings red, the old Secret, and an
// extra ConfigMap that left Git. "same" is equal on both sides.
const (
	diffSettingsBlue = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue, size: large}\n"
	diffSettingsRed  = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: red, size: large}\n"
	diffNew          = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {added: \"yes\"}\n"
	diffExtra        = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {stale: \"yes\"}\n"
	diffSame         = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata: {equal: \"yes\"}\n"
	diffSecretNew    = "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\ntype: Opaque\ndata: {token: bmV3LXRva2Vu, user: YWRtaW4=}\n"
	diffSecretOld    = "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\ntype: Opaque\ndata: {token: b2xkLXRva2Vu, user: YWRtaW4=}\n"
)

const diffApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: diffapp}
spec:
  project: default
  source: {repoURL: REPO, path: guestbook}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
`

// TestAppDiff compares an app with the cluster from its source and from a
// local folder, and checks the output and the exit codes.
func TestAppDiff(t *testing.T) {
	ns, c := appCluster(t)
	repo := writeFolder(t, "guestbook", diffSettingsBlue, diffNew, diffSame, diffSecretNew)
	live := []string{diffSettingsRed, diffExtra, diffSame, diffSecretOld}
	local := filepath.Join(writeFolder(t, "local", live...), "local")
	for _, manifest := range live {
		createTracked(t, c, ns, "diffapp", manifest)
	}
	createObject(t, c, ns, strings.NewReplacer("REPO", repo, "NAMESPACE", ns).Replace(diffApp))
	tests := map[string]struct {
		args     []string
		wantCode int
		golden   string
		wantErr  string
	}{
		"differences from Git":         {args: []string{"diff", "diffapp"}, wantCode: 1, golden: "app-diff.txt"},
		"a local folder like the live": {args: []string{"diff", "diffapp", "--local", local}, wantCode: 0},
		"an unknown app":               {args: []string{"diff", "nope"}, wantCode: 2, wantErr: `application "nope" not found`},
		"a local folder that is not":   {args: []string{"diff", "diffapp", "--local", filepath.Join(local, "nope")}, wantCode: 2, wantErr: "nope"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := runApp(t, ns, tc.args...)
			if code := exitCode(err); code != tc.wantCode || (tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("exit code %d (%v), want %d and %q\nstderr: %s", code, err, tc.wantCode, tc.wantErr, errOut)
			}
			if tc.golden != "" {
				assertGolden(t, tc.golden, normalize(out, ns))
			} else if out != "" {
				t.Errorf("output %q, want none", out)
			}
		})
	}
}

// TestAppDiffHelp keeps the help readable and the exit codes documented.
func TestAppDiffHelp(t *testing.T) {
	out, _, err := runCLI(t, "app", "diff", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage:", "Examples:", "--kubeconfig", "--namespace", "--local", "Exit codes: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("help of app diff lacks %q", want)
		}
	}
}

// writeFolder writes manifests into a new folder dir under a temporary
// folder, which it returns.
func writeFolder(t *testing.T, dir string, manifests ...string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, m := range manifests {
		u := decode(t, m)
		files[filepath.Join(dir, strings.ToLower(u.GetKind())+"-"+u.GetName()+".yaml")] = m
	}
	folder.Write(t, root, files)
	return root
}

// createTracked creates an object in ns tracked by app, as a sync would
// have left it.
func createTracked(t *testing.T, c client.Client, ns, app, manifest string) {
	t.Helper()
	u := decode(t, manifest)
	u.SetNamespace(ns)
	u.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": app + ":/" + u.GetKind() + ":" + ns + "/" + u.GetName()})
	if err := c.Create(t.Context(), u); err != nil {
		t.Fatal(err)
	}
}

func createObject(t *testing.T, c client.Client, ns, manifest string) {
	t.Helper()
	u := decode(t, manifest)
	u.SetNamespace(ns)
	if err := c.Create(t.Context(), u); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
