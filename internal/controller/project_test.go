package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

const clusterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NAME}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`

// TestProjectEnforcement checks that an app the project forbids applies
// nothing: a forbidden repository or destination is an InvalidSpecError,
// a cluster-scoped kind off the whitelist fails the sync before anything is
// applied. Objects are named after the app, so any leak is found.
func TestProjectEnforcement(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	roleName := "wavecd-test-" + h.ns
	repo := testenv.NewGitRepo(t, map[string]string{
		"plain/cm.yaml":            strings.ReplaceAll(guestbookConfigMap, "settings", "plain"),
		"cluster/cm.yaml":          strings.ReplaceAll(guestbookConfigMap, "settings", "cluster"),
		"cluster/clusterrole.yaml": strings.ReplaceAll(clusterRole, "NAME", roleName),
		"later/cm.yaml":            strings.ReplaceAll(guestbookConfigMap, "settings", "later"),
	})
	h.createProject("no-repo", v1alpha1.AppProjectSpec{SourceRepos: []string{"https://example.com/*"}, Destinations: anywhere})
	h.createProject("no-dest", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "elsewhere"}}})
	h.createProject("no-cluster", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere})
	h.createProject("later", v1alpha1.AppProjectSpec{Destinations: anywhere})
	tests := map[string]struct {
		project, path string
		// condition is part of the InvalidSpecError; "" means the sync
		// fails with failure instead.
		condition, failure string
	}{
		"forbidden repository":  {project: "no-repo", path: "plain", condition: "application repo " + repo.Dir + " is not permitted in project 'no-repo'"},
		"forbidden destination": {project: "no-dest", path: "plain", condition: "do not match any of the allowed destinations in project 'no-dest'"},
		"cluster-scoped kind not whitelisted": {project: "no-cluster", path: "cluster",
			failure: "cluster-scoped resource rbac.authorization.k8s.io:ClusterRole is not permitted in project no-cluster"},
	}
	t.Run("a project that allows the app later", func(t *testing.T) {
		t.Parallel()
		testProjectAllowsLater(t, h.in(t), repo)
	})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := h.in(t)
			h.create(testApp{name: tc.project, project: tc.project, path: tc.path, repoURL: repo.Dir, syncNow: true})
			if tc.condition != "" {
				h.waitApp(tc.project, 30*time.Second, "an InvalidSpecError", func(a *v1alpha1.Application) bool {
					return strings.Contains(conditionMessage(a, v1alpha1.ApplicationConditionInvalidSpecError), tc.condition)
				})
			} else {
				h.waitApp(tc.project, 30*time.Second, "a failed sync", func(a *v1alpha1.Application) bool {
					op := a.Status.OperationState
					return op != nil && op.Phase == v1alpha1.OperationFailed && strings.Contains(op.Message, tc.failure)
				})
			}
			if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: tc.path}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				t.Errorf("ConfigMap %s of a forbidden app: %v, want it never created", tc.path, err)
			}
			if err := h.c.Get(context.Background(), client.ObjectKey{Name: roleName}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
				t.Errorf("ClusterRole of a forbidden app: %v, want it never created", err)
			}
		})
	}
}

// testProjectAllowsLater: an app refused by its project syncs, and loses
// its InvalidSpecError, once the project is changed to allow it.
func testProjectAllowsLater(t *testing.T, h *harness, repo *testenv.GitRepo) {
	h.create(testApp{name: "later", project: "later", repoURL: repo.Dir, syncNow: true})
	h.waitApp("later", 30*time.Second, "an InvalidSpecError", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionInvalidSpecError)
	})
	proj := &v1alpha1.AppProject{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "later"}, proj); err != nil {
		t.Fatal(err)
	}
	base := proj.DeepCopy()
	proj.Spec.SourceRepos = []string{"*"}
	if err := h.c.Patch(context.Background(), proj, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	app := h.waitApp("later", 30*time.Second, "synced once the project allows it", func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if hasCondition(app, v1alpha1.ApplicationConditionInvalidSpecError) {
		t.Errorf("InvalidSpecError stayed after the project allowed the app: %s", describe(app))
	}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "later"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap of the allowed app: %v", err)
	}
}

var anywhere = []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}

func (h *harness) createProject(name string, spec v1alpha1.AppProjectSpec) {
	h.t.Helper()
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name}, Spec: spec}
	if err := h.c.Create(context.Background(), proj); err != nil {
		h.t.Fatal(err)
	}
}
