package appset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/scm/scmtest"
	"github.com/wavecd/wavecd/internal/testenv"
)

const dirsSet = `
metadata: {name: dirs}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: REPO
      revision: main
      directories:
      - path: apps/*
  template:
    metadata:
      name: '{{.path.basename}}'
    spec:
      project: default
      source: {repoURL: REPO, targetRevision: main, path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
      syncPolicy:
        automated: {prune: true}
`

// TestGitDirectoriesFollowGit: one app per directory, synced by the
// Application controller; a directory removed from Git (and the set
// refreshed) deletes its app and, through the resources finalizer, the
// app's objects.
func TestGitDirectoriesFollowGit(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{apps: true})
	repo := testenv.NewGitRepo(t, map[string]string{
		"apps/alpha/cm.yaml": configMap("alpha"), "apps/beta/cm.yaml": configMap("beta"), "README.md": "docs",
	})
	h.createSet(dirsSet, repo.Dir)
	h.eventually(90*time.Second, "both apps synced", func() bool {
		return h.configMapExists("alpha") && h.configMapExists("beta")
	}, func() string { return strings.Join(h.appNames(), ",") })

	alpha := h.app("alpha")
	ref := metav1.GetControllerOf(alpha)
	if ref == nil || ref.Kind != "ApplicationSet" || ref.Name != "dirs" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("alpha's controller reference = %+v, want the ApplicationSet dirs", ref)
	}
	if !slices.Contains(alpha.Finalizers, v1alpha1.FinalizerResources) {
		t.Errorf("alpha's finalizers = %v, want %s", alpha.Finalizers, v1alpha1.FinalizerResources)
	}
	if names := h.appNames(); !slices.Equal(names, []string{"alpha", "beta"}) {
		t.Errorf("apps = %v, want alpha and beta", names)
	}
	h.eventually(30*time.Second, "ResourcesUpToDate and resources listed", func() bool {
		set := h.set("dirs")
		c := condition(set, v1alpha1.ApplicationSetConditionResourcesUpToDate)
		return c != nil && c.Status == "True" && len(set.Status.Resources) == 2
	}, func() string { return describeConditions(h.set("dirs")) })

	repo.Commit(map[string]string{"apps/beta/cm.yaml": ""}, "remove beta")
	h.updateSet("dirs", func(s *v1alpha1.ApplicationSet) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[AnnotationRefresh] = "true"
	})
	h.eventually(90*time.Second, "beta and its ConfigMap deleted", func() bool {
		return h.app("beta") == nil && !h.configMapExists("beta")
	}, func() string { return strings.Join(h.appNames(), ",") })
	if h.app("alpha") == nil || !h.configMapExists("alpha") {
		t.Error("alpha or its ConfigMap went away with beta")
	}
	h.eventually(10*time.Second, "the refresh annotation removed", func() bool {
		_, ok := h.set("dirs").Annotations[AnnotationRefresh]
		return !ok
	}, func() string { return "annotation still set" })
}

func (h *harness) configMapExists(name string) bool {
	h.t.Helper()
	err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
	return err == nil
}

const listSet = `
metadata: {name: list}
spec:
  syncPolicy:
    preserveResourcesOnDeletion: true
    applicationsSync: POLICY
  generators:
  - list:
      elements:
      - {name: one}
      - {name: two}
  template:
    metadata:
      name: '{{name}}'
      annotations: {version: v1}
    spec:
      project: default
      source: {repoURL: https://example.com/repo.git, targetRevision: main, path: '{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
`

// TestCreateOnly: create-only creates new apps but never updates or
// deletes existing ones.
func TestCreateOnly(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	h.createSet(strings.ReplaceAll(listSet, "POLICY", "create-only"), "")
	h.eventually(30*time.Second, "apps one and two", func() bool { return h.app("one") != nil && h.app("two") != nil },
		func() string { return strings.Join(h.appNames(), ",") })

	h.updateSet("list", func(s *v1alpha1.ApplicationSet) {
		s.Spec.Template.Annotations["version"] = "v2"
		s.Spec.Generators[0].List.Elements = s.Spec.Generators[0].List.Elements[:1] // drop two
		s.Spec.Generators[0].List.Elements = append(s.Spec.Generators[0].List.Elements, jsonElement(`{"name": "three"}`))
	})
	// three is created from the new template: the change was reconciled.
	h.eventually(30*time.Second, "app three from the new template", func() bool {
		a := h.app("three")
		return a != nil && a.Annotations["version"] == "v2"
	}, func() string { return strings.Join(h.appNames(), ",") })
	if v := h.app("one").Annotations["version"]; v != "v1" {
		t.Errorf("app one was updated to version %s; create-only never updates", v)
	}
	if h.app("two") == nil {
		t.Error("app two was deleted; create-only never deletes")
	}
}

// TestGoTemplateMissingKey: a template error is an ErrorOccurred condition
// naming the generator and the parameter, and no app is deleted.
func TestGoTemplateMissingKey(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	h.createSet(`
metadata: {name: strict}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  syncPolicy: {preserveResourcesOnDeletion: true}
  generators:
  - list:
      elements:
      - {name: one}
      - {name: two}
  template:
    metadata:
      name: '{{.name}}'
    spec:
      project: default
      source: {repoURL: https://example.com/repo.git, targetRevision: main, path: '{{.name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
`, "")
	h.eventually(30*time.Second, "apps one and two", func() bool { return h.app("one") != nil && h.app("two") != nil },
		func() string { return strings.Join(h.appNames(), ",") })

	h.updateSet("strict", func(s *v1alpha1.ApplicationSet) {
		s.Spec.Template.Name = "{{.name}}-{{.team}}"
	})
	var errCond *v1alpha1.ApplicationSetCondition
	h.eventually(30*time.Second, "ErrorOccurred", func() bool {
		errCond = condition(h.set("strict"), v1alpha1.ApplicationSetConditionErrorOccurred)
		return errCond != nil && errCond.Status == "True"
	}, func() string { return describeConditions(h.set("strict")) })
	for _, want := range []string{"generators[0].list", "template.metadata.name", `map has no entry for key "team"`} {
		if !strings.Contains(errCond.Message, want) {
			t.Errorf("ErrorOccurred message %q does not contain %q", errCond.Message, want)
		}
	}
	if errCond.Reason != v1alpha1.ApplicationSetReasonRenderTemplateParamsError {
		t.Errorf("reason = %s, want %s", errCond.Reason, v1alpha1.ApplicationSetReasonRenderTemplateParamsError)
	}
	set := h.set("strict")
	if c := condition(set, v1alpha1.ApplicationSetConditionParametersGenerated); c == nil || c.Status != "False" {
		t.Errorf("ParametersGenerated = %+v, want False", c)
	}
	if c := condition(set, v1alpha1.ApplicationSetConditionResourcesUpToDate); c == nil || c.Status != "False" {
		t.Errorf("ResourcesUpToDate = %+v, want False", c)
	}
	// The condition is written after the reconcile that would have
	// deleted them; give a later one the chance too.
	time.Sleep(2 * time.Second)
	if names := h.appNames(); !slices.Equal(names, []string{"one", "two"}) {
		t.Errorf("apps = %v after a template error, want one and two kept", names)
	}
}

// TestIgnoreApplicationDifferences: fields a user changed that the rules
// name are kept when the set updates the app.
func TestIgnoreApplicationDifferences(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	h.createSet(`
metadata: {name: ignore}
spec:
  syncPolicy: {preserveResourcesOnDeletion: true}
  ignoreApplicationDifferences:
  - jsonPointers: [/spec/source/targetRevision]
  - name: web
    jqPathExpressions: [.spec.syncPolicy]
  generators:
  - list:
      elements:
      - {name: web}
  template:
    metadata:
      name: '{{name}}'
    spec:
      project: default
      source: {repoURL: https://example.com/repo.git, targetRevision: main, path: v1}
      destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
`, "")
	h.eventually(30*time.Second, "app web", func() bool { return h.app("web") != nil }, func() string { return "" })
	app := h.app("web")
	before := app.DeepCopy()
	app.Spec.Source.TargetRevision = "hotfix"
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	if err := h.c.Patch(context.Background(), app, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	h.updateSet("ignore", func(s *v1alpha1.ApplicationSet) { s.Spec.Template.Spec.Source.Path = "v2" })
	h.eventually(30*time.Second, "path v2", func() bool { return h.app("web").Spec.Source.Path == "v2" },
		func() string { return h.app("web").Spec.Source.Path })
	got := h.app("web")
	if got.Spec.Source.TargetRevision != "hotfix" {
		t.Errorf("targetRevision = %s, want the user's hotfix kept", got.Spec.Source.TargetRevision)
	}
	if !got.Spec.SyncPolicy.IsAutomated() || !got.Spec.SyncPolicy.Automated.SelfHeal {
		t.Errorf("syncPolicy = %+v, want the user's automated sync kept", got.Spec.SyncPolicy)
	}
}

// TestDeleteSet: deleting a set deletes its apps (garbage collection
// follows their owner reference), except under a policy that forbids
// deleting apps, where a set with the resources finalizer releases them
// first.
func TestDeleteSet(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	for _, policy := range []string{"sync", "create-update"} {
		manifest := strings.ReplaceAll(listSet, "POLICY", policy)
		manifest = strings.Replace(manifest, "metadata: {name: list}", "metadata: {name: "+policy+", finalizers: [resources-finalizer.argocd.argoproj.io]}", 1)
		manifest = strings.ReplaceAll(manifest, "name: '{{name}}'", "name: '"+policy+"-{{name}}'")
		h.createSet(manifest, "")
	}
	all := []string{"create-update-one", "create-update-two", "sync-one", "sync-two"}
	h.eventually(30*time.Second, "the apps of both sets", func() bool { return slices.Equal(h.appNames(), all) },
		func() string { return strings.Join(h.appNames(), ",") })
	for _, policy := range []string{"sync", "create-update"} {
		if err := h.c.Delete(context.Background(), &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: policy}}); err != nil {
			t.Fatal(err)
		}
	}
	// The garbage collector notices new CRDs on its periodic discovery (30 s).
	h.eventually(90*time.Second, "the sync set's apps garbage collected", func() bool {
		return slices.Equal(h.appNames(), []string{"create-update-one", "create-update-two"})
	}, func() string { return strings.Join(h.appNames(), ",") })
	h.eventually(10*time.Second, "both sets gone", func() bool {
		list := &v1alpha1.ApplicationSetList{}
		return h.c.List(context.Background(), list, client.InNamespace(h.ns)) == nil && len(list.Items) == 0
	}, func() string { return "a set is still there" })
	for _, n := range []string{"create-update-one", "create-update-two"} {
		if app := h.app(n); app == nil || len(app.OwnerReferences) != 0 {
			t.Errorf("%s: %+v, want kept with no owner reference", n, app)
		}
	}
}

// TestPluginGeneratorInCluster runs a plugin generator whose ConfigMap and
// token Secret are in the namespace: the plugin on loopback is asked with
// its bearer token, its answer becomes the apps, and the refresh
// annotation asks it again.
func TestPluginGeneratorInCluster(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	p := startPlugin(t)
	for _, o := range p.objects(t) {
		if name := o.GetName(); name != "envs-plugin" && name != "argocd-secret" {
			continue
		}
		o.SetNamespace(h.ns)
		if err := h.c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "plugin", "appset-gotemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h.createSet(strings.Replace(string(raw), "namespace: argocd", "namespace: NAMESPACE", 1), "")
	h.eventually(30*time.Second, "apps dev-shop and prod-shop", func() bool {
		return slices.Equal(h.appNames(), []string{"dev-shop", "prod-shop"})
	}, func() string { return strings.Join(h.appNames(), ",") + " " + describeConditions(h.set("envs")) })

	p.answerWith(`{"output": {"parameters": [{"name": "dev", "replicas": 1, "labels": {"tier": "front"}}]}}`)
	h.updateSet("envs", func(s *v1alpha1.ApplicationSet) {
		s.Annotations = map[string]string{AnnotationRefresh: "true"}
	})
	// No Application controller runs here to remove the resources
	// finalizer: the deletion is requested.
	h.eventually(30*time.Second, "prod-shop deleted after the plugin stopped listing it", func() bool {
		a := h.app("prod-shop")
		return a == nil || a.DeletionTimestamp != nil
	}, func() string {
		p.mu.Lock()
		defer p.mu.Unlock()
		set := h.set("envs")
		return fmt.Sprintf("apps %s; plugin asked %d times; annotations %v; %s", strings.Join(h.appNames(), ","), len(p.sent), set.Annotations, describeConditions(set))
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sent) < 2 {
		t.Errorf("the plugin was asked %d times, want again after the refresh", len(p.sent))
	}
}

// TestPullRequestGeneratorInCluster generates a preview app per open pull
// request of a GitHub repository (its API replayed on loopback:
// responses in GitHub's shape, not recorded live), with the token from a
// Secret of the set's namespace.
func TestPullRequestGeneratorInCluster(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	api := scmtest.ServeGitHub(t, "ghp_test")
	for _, o := range scmObjects(t) {
		o.SetNamespace(h.ns)
		if err := h.c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "scm", "pr-gotemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.NewReplacer("namespace: argocd", "namespace: NAMESPACE", "API_URL", api.URL).Replace(string(raw))
	h.createSet(manifest, "")
	h.eventually(30*time.Second, "an app per matching pull request", func() bool {
		return slices.Equal(h.appNames(), []string{"cart-feature-coupons-42", "cart-release-2-0-44"})
	}, func() string { return strings.Join(h.appNames(), ",") + " " + describeConditions(h.set("previews")) })
	if app := h.app("cart-feature-coupons-42"); app.Spec.Source.TargetRevision != "c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc" || app.Labels["author"] != "alice" {
		t.Errorf("cart-feature-coupons-42: revision %s, labels %v", app.Spec.Source.TargetRevision, app.Labels)
	}
	if u := api.Unknown(); len(u) > 0 {
		t.Errorf("requests the replay does not know: %v", u)
	}
}

// TestClusterDecisionResource generates one app per decision of an Open
// Cluster Management PlacementDecision (a CRD of the test) that names a
// registered cluster, and follows a changed decision on refresh.
func TestClusterDecisionResource(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	if err := h.env.ApplyCRDs(t.Context(), filepath.Join("testdata", "decisions", "crds")); err != nil {
		t.Fatal(err)
	}
	h.createClusterSecret("cluster-edge-1", "edge-1", "https://edge-1.example.invalid", nil)
	raw, err := os.ReadFile(filepath.Join("testdata", "decisions", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var decision *unstructured.Unstructured
	for _, doc := range splitYAML(t, string(raw)) {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatal(err)
		}
		o.SetNamespace(h.ns)
		if err := h.c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		if o.GetKind() == "PlacementDecision" {
			decision = o
		}
	}
	set, err := os.ReadFile(filepath.Join("testdata", "decisions", "appset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h.createSet(string(set), "")
	h.eventually(30*time.Second, "app web-edge-1", func() bool {
		return slices.Equal(h.appNames(), []string{"web-edge-1"})
	}, func() string { return strings.Join(h.appNames(), ",") + " " + describeConditions(h.set("web")) })
	app := h.app("web-edge-1")
	if app.Spec.Destination.Server != "https://edge-1.example.invalid" || app.Labels["tier"] != "front" || app.Labels["reason"] != "scheduled" {
		t.Errorf("web-edge-1: destination %s, labels %v", app.Spec.Destination.Server, app.Labels)
	}

	list := []any{map[string]any{"clusterName": "edge-1", "reason": "scheduled"}, map[string]any{"clusterName": "in-cluster", "reason": "added"}}
	if err := unstructured.SetNestedSlice(decision.Object, list, "status", "decisions"); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Update(t.Context(), decision); err != nil {
		t.Fatal(err)
	}
	h.updateSet("web", func(s *v1alpha1.ApplicationSet) {
		s.Annotations = map[string]string{AnnotationRefresh: "true"}
	})
	h.eventually(30*time.Second, "apps web-edge-1 and web-in-cluster", func() bool {
		return slices.Equal(h.appNames(), []string{"web-edge-1", "web-in-cluster"})
	}, func() string { return strings.Join(h.appNames(), ",") })
}
