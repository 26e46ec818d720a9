package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// An operator as charts ship one: its CRD and Deployment. GROUP is the
// test's own API group (CRDs are cluster-wide, tests run in parallel).
const (
	widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.GROUP}
spec:
  group: GROUP
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
	operatorDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: widget-operator}
spec:
  replicas: 1
  selector: {matchLabels: {app: widget-operator}}
  template:
    metadata: {labels: {app: widget-operator}}
    spec:
      containers: [{name: manager, image: example.com/widget-operator:v1}]
`
	widgets = `apiVersion: GROUP/v1
kind: Widget
metadata: {name: a}
spec: {size: 1}
---
apiVersion: GROUP/v1
kind: Widget
metadata: {name: b}
spec: {size: 2}
`
	// finalizedChild is a child Application as users write them, with
	// the resources finalizer.
	finalizedChild = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
  annotations: {argocd.argoproj.io/sync-wave: "WAVE"}
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {repoURL: REPO, path: NAME, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
  syncPolicy: {automated: {prune: true}}
`
)

// TestTeardownOrder deletes an operator and its finalized custom resources
// with the app that installed them. wavecd deletes the custom resources
// while the operator still runs, then the operator, then its CRD. Argo CD
// parity follows sync waves too (so an app of apps with the operator in
// wave 0 and the custom resources in wave 1 goes down in order, its CRD
// left), but deletes one wave at once: with the operator and its custom
// resources in one wave the operator goes first and the finalizers stay.
func TestTeardownOrder(t *testing.T) {
	tests := map[string]struct {
		opts Options
		// appOfApps puts the operator in child app "operator" (wave 0) and
		// the widgets in child app "widgets" (wave 1) of app "root";
		// otherwise they are all in app "root", without waves.
		appOfApps bool
		stuck     bool
		crdKept   bool
	}{
		"wavecd app of apps":               {appOfApps: true},
		"wavecd one app and one wave":      {},
		"argo parity app of apps":          {opts: Options{ArgoParity: true}, appOfApps: true, crdKept: true},
		"argo parity one app and one wave": {opts: Options{ArgoParity: true}, stuck: true, crdKept: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.opts.StallTimeout = 3 * time.Second
			h := startController(t, tc.opts)
			group := h.ns + ".wavecd.test"
			op := &testenv.FinalizerOperator{
				Dynamic: h.env.Dynamic, Deployment: types.NamespacedName{Namespace: h.ns, Name: "widget-operator"},
				Resource: schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}, Namespace: h.ns, Finalizer: group + "/cleanup",
			}
			stop := op.Start(t)
			t.Cleanup(func() {
				_ = h.env.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
					Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
			})
			repo := teardownRepo(t, h, group, tc.appOfApps)
			path := "root"
			if tc.appOfApps {
				path = "apps"
			}
			h.create(testApp{name: "root", path: path, repoURL: repo.Dir, automated: true, finalizers: []string{v1alpha1.FinalizerResources}})
			h.waitApp("root", 120*time.Second, "Synced and Healthy", syncedHealthy)
			if tc.appOfApps {
				h.waitApp("widgets", 60*time.Second, "Synced and Healthy", syncedHealthy)
			}
			testenv.Eventually(t, 30*time.Second, "the operator's finalizer on both widgets", func() bool { return op.Finalized() == 2 })
			if err := h.c.Delete(context.Background(), h.app("root")); err != nil {
				t.Fatal(err)
			}
			if tc.stuck {
				checkStuck(t, h, op, stop)
				return
			}
			testenv.Eventually(t, 90*time.Second, "the root app gone", func() bool { return h.app("root") == nil })
			op.CheckClearedFirst(t, 2)
			crd := &metav1.PartialObjectMetadata{}
			crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
			err := h.c.Get(context.Background(), client.ObjectKey{Name: "widgets." + group}, crd)
			switch {
			case tc.crdKept && err != nil:
				t.Errorf("CRD after the teardown: %v, want it kept as Argo CD keeps it", err)
			case !tc.crdKept && !apierrors.IsNotFound(err):
				t.Errorf("CRD after the teardown: %v, want it deleted", err)
			}
		})
	}
}

// teardownRepo writes the operator and its widgets, in one app or in an
// app of apps.
func teardownRepo(t *testing.T, h *harness, group string, appOfApps bool) *testenv.GitRepo {
	t.Helper()
	g := func(s string) string { return strings.ReplaceAll(s, "GROUP", group) }
	if !appOfApps {
		return testenv.NewGitRepo(t, map[string]string{
			"root/crd.yaml": g(widgetCRD), "root/operator.yaml": operatorDeployment, "root/widgets.yaml": g(widgets),
		})
	}
	repo := testenv.NewGitRepo(t, map[string]string{
		"operator/crd.yaml": g(widgetCRD), "operator/operator.yaml": operatorDeployment, "widgets/widgets.yaml": g(widgets),
	})
	childOf := func(name, wave string) string {
		r := strings.NewReplacer("NAMESPACE", h.ns, "NAME", name, "REPO", repo.Dir, "WAVE", wave)
		return r.Replace(finalizedChild)
	}
	repo.Commit(map[string]string{"apps/operator.yaml": childOf("operator", "0"), "apps/widgets.yaml": childOf("widgets", "1")}, "add apps")
	return repo
}

// checkStuck checks that the teardown waits on the widgets' finalizer,
// and says so, then stops the operator, clears the finalizer by hand and
// checks the app goes.
func checkStuck(t *testing.T, h *harness, op *testenv.FinalizerOperator, stop func()) {
	t.Helper()
	app := h.waitApp("root", 60*time.Second, "DeletionStalled", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionDeletionStalled)
	})
	msg := conditionMessage(app, v1alpha1.ApplicationConditionDeletionStalled)
	for _, want := range []string{"Widget " + h.ns + "/a", "finalizer " + op.Finalizer, "the controller of API group " + op.Resource.Group} {
		if !strings.Contains(msg, want) {
			t.Errorf("DeletionStalled %q does not say %q", msg, want)
		}
	}
	if cleared := op.Cleared(); len(cleared) != 0 {
		t.Errorf("the operator cleared the finalizers of %v, want none: it was deleted first", cleared)
	}
	stop()
	for _, name := range []string{"a", "b"} {
		op.Release(t, h.ns, name)
	}
	testenv.Eventually(t, 60*time.Second, "the root app gone once the finalizers were cleared by hand", func() bool { return h.app("root") == nil })
}
