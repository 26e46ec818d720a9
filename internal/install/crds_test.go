package install

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestBundledCRDs(t *testing.T) {
	crds, err := BundledCRDs()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, crd := range crds {
		var cols []string
		for _, v := range crd.Spec.Versions {
			for _, c := range v.AdditionalPrinterColumns {
				cols = append(cols, c.Name)
			}
		}
		got[crd.Name] = cols
	}
	want := map[string][]string{
		"applications.argoproj.io":    {"Sync Status", "Health Status", "Revision", "Project"},
		"applicationsets.argoproj.io": nil,
		"appprojects.argoproj.io":     nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("bundled CRDs and printer columns (-want +got):\n%s", diff)
	}
}

// TestInstallCRDs runs in steps because CRDs are cluster-scoped: an Argo
// CD-owned AppProject CRD exists first and must be kept.
func TestInstallCRDs(t *testing.T) {
	env := testenv.Get(t)
	ctx := t.Context()
	c, err := apiextensions.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	foreign := argoCDOwned(t, "appprojects.argoproj.io")
	if _, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []CRDResult{
		{Name: "applications.argoproj.io", Action: CRDApplied},
		{Name: "applicationsets.argoproj.io", Action: CRDApplied},
		{Name: "appprojects.argoproj.io", Action: CRDKeptForeign},
	}
	for _, round := range []string{"first install", "second install is idempotent"} {
		got, err := InstallCRDs(ctx, c, CRDOptions{})
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", round, diff)
		}
	}
	live, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "appprojects.argoproj.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Labels[ManagedByLabel] == "wavecd" {
		t.Fatal("the Argo CD-owned CRD was taken over")
	}
	t.Run("unknown Argo CD fields are preserved", func(t *testing.T) { testPreservesUnknownFields(t, env) })
}

func argoCDOwned(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := BundledCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if crd.Name == name {
			crd = crd.DeepCopy()
			crd.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd", "app.kubernetes.io/name": name}
			return crd
		}
	}
	t.Fatalf("no bundled CRD %s", name)
	return nil
}

const appWithUnknownFields = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
spec:
  project: default
  source:
    repoURL: https://example.test/repo.git
    path: guestbook
    futureSourceField: kept
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
  sourceHydrator:
    drySource: {repoURL: https://example.test/repo.git, path: x, targetRevision: HEAD}
status:
  sync: {status: Synced}
  futureStatusField: {a: 1}
`

func testPreservesUnknownFields(t *testing.T, env *testenv.Env) {
	ns := env.Namespace(t)
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(appWithUnknownFields), &obj.Object); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	created, err := env.Dynamic.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paths := [][]string{
		{"spec", "source", "futureSourceField"},
		{"spec", "sourceHydrator", "drySource", "path"},
		{"status", "futureStatusField"},
	}
	for _, p := range paths {
		if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, p...); !found {
			t.Errorf("field %v was pruned", p)
		}
	}
}
