package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

var applications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// demoDir is the seed demo: a root app-of-apps whose children deploy a
// slow Redis (app-a, wave 0) and a service that crash-loops without it
// (app-b, wave 1).
const demoDir = "../../examples/healthcheck-poc"

// demoApps are the demo's Applications.
var demoApps = []string{"root", "app-a", "app-b"}

// seedDemo commits the demo into a Git repository for an install in ns:
// its Applications live in ns (the demo says argocd) and deploy to
// <ns>-app-a and <ns>-app-b (the demo says app-a and app-b), so installs
// side by side do not meet. Each install still needs its own installationID
// (see idValues): every install has an app-a, and as in Argo CD an app
// claims the objects tracked with its name unless the installation IDs
// differ. It returns the repository and the root Application, pointed at
// it; the test deletes the child namespaces.
func seedDemo(t *testing.T, env *testenv.Env, ns string) (*testenv.GitRepo, *unstructured.Unstructured) {
	t.Helper()
	replaced := map[string]int{}
	replace := func(content, old, with string) string {
		replaced[old] += strings.Count(content, old)
		return strings.ReplaceAll(content, old, with)
	}
	files := readTree(t, demoDir, func(path, content string) string {
		switch {
		case strings.HasPrefix(path, "apps/templates/"):
			content = replace(content, "namespace: argocd", "namespace: "+ns)
			content = replace(content, "namespace: app-a", "namespace: "+ns+"-app-a")
			content = replace(content, "namespace: app-b", "namespace: "+ns+"-app-b")
		case path == "charts/app-b/values.yaml":
			content = replace(content, "redis.app-a:", "redis."+ns+"-app-a:")
		}
		return content
	})
	for _, old := range []string{"namespace: argocd", "namespace: app-a", "namespace: app-b", "redis.app-a:"} {
		if replaced[old] == 0 {
			t.Fatalf("the demo in %s no longer holds %q: update seedDemo", demoDir, old)
		}
	}
	repo := testenv.NewGitRepo(t, files)
	t.Cleanup(func() {
		for _, child := range []string{ns + "-app-a", ns + "-app-b"} {
			_ = env.Client.CoreV1().Namespaces().Delete(t.Context(), child, metav1.DeleteOptions{})
		}
	})

	root := readObject(t, demoDir+"/apps/root.yaml")
	root.SetNamespace(ns)
	setField(t, root, repo.Dir, "spec", "source", "repoURL")
	setField(t, root, repo.Dir, "spec", "source", "helm", "valuesObject", "repoURL")
	setField(t, root, ns, "spec", "destination", "namespace")
	return repo, root
}

// idValues writes chart values that give the install in ns its own
// installationID, and returns the file.
func idValues(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "installation-id.yaml")
	if err := os.WriteFile(path, []byte("configs:\n  cm:\n    installationID: "+ns+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkInstallationID asserts app-a's StatefulSet carries the install's
// installationID, the mark that keeps the other installs' app-a off it.
func checkInstallationID(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	sts, err := env.Client.AppsV1().StatefulSets(ns+"-app-a").Get(t.Context(), "redis", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("app-a's StatefulSet: %v", err)
	}
	if got := sts.Annotations[kube.AnnotationInstallationID]; got != ns {
		t.Errorf("app-a's StatefulSet has installation-id %q, want %q", got, ns)
	}
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &obj.Object); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return obj
}

// setField sets an existing string field: a field the file no longer has
// means the test no longer does what it says.
func setField(t *testing.T, obj *unstructured.Unstructured, value string, path ...string) {
	t.Helper()
	if _, ok, _ := unstructured.NestedString(obj.Object, path...); !ok {
		t.Fatalf("%s %s has no field %s", obj.GetKind(), obj.GetName(), strings.Join(path, "."))
	}
	if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
	}
}

// applyApp creates or updates an Application with server-side apply.
func applyApp(t *testing.T, env *testenv.Env, app *unstructured.Unstructured) {
	t.Helper()
	_, err := env.Dynamic.Resource(applications).Namespace(app.GetNamespace()).Apply(t.Context(), app.GetName(), app,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		t.Fatalf("apply Application %s: %v", app.GetName(), err)
	}
}

// appState is what the tests read from an Application's status.
type appState struct {
	Sync, Health, Phase, Message string
	Conditions                   []string
}

func (s appState) String() string {
	return fmt.Sprintf("sync=%s health=%s operation=%s %q conditions=%q", s.Sync, s.Health, s.Phase, s.Message, s.Conditions)
}

func (s appState) syncedHealthy() bool { return s.Sync == "Synced" && s.Health == "Healthy" }

func getApp(t *testing.T, env *testenv.Env, ns, name string) (*unstructured.Unstructured, appState, error) {
	t.Helper()
	app, err := env.Dynamic.Resource(applications).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil, appState{}, err
	}
	var s appState
	s.Sync, _, _ = unstructured.NestedString(app.Object, "status", "sync", "status")
	s.Health, _, _ = unstructured.NestedString(app.Object, "status", "health", "status")
	s.Phase, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "phase")
	s.Message, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "message")
	conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		s.Conditions = append(s.Conditions, fmt.Sprintf("%v: %v", m["type"], m["message"]))
	}
	return app, s, nil
}

// appStates returns the state of each named app, and a summary.
func appStates(t *testing.T, env *testenv.Env, ns string, names []string) (map[string]appState, string) {
	t.Helper()
	states := map[string]appState{}
	var lines []string
	for _, name := range names {
		_, s, err := getApp(t, env, ns, name)
		switch {
		case apierrors.IsNotFound(err):
			lines = append(lines, name+": not created")
			continue
		case err != nil:
			lines = append(lines, name+": "+err.Error())
			continue
		}
		states[name] = s
		lines = append(lines, name+": "+s.String())
	}
	return states, strings.Join(lines, "\n")
}

// waitSyncedHealthy waits until every named app is Synced and Healthy.
func waitSyncedHealthy(t *testing.T, env *testenv.Env, ns string, names []string, timeout time.Duration) {
	t.Helper()
	testenv.EventuallyState(t, timeout, fmt.Sprintf("apps %v Synced and Healthy", names), func() (bool, string) {
		states, summary := appStates(t, env, ns, names)
		ok := len(states) == len(names)
		for _, s := range states {
			ok = ok && s.syncedHealthy()
		}
		return ok, summary
	})
}

// refreshApp asks the controller to compare the app with Git again, as
// `argocd app get --refresh` does.
func refreshApp(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}`)
	if _, err := env.Dynamic.Resource(applications).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("refresh %s: %v", name, err)
	}
}

// containsFold reports whether any of texts contains sub, ignoring case.
func containsFold(texts []string, sub string) bool {
	return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) })
}
