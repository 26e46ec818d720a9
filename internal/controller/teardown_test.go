package controller

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
			op := startWidgetOperator(t, h, group)
			t.Cleanup(func() {
				_ = h.env.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
					Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
			})
			repo := teardownRepo(t, h, group, tc.appOfApps)
			path := "root"
			if tc.appOfApps {
				path = "apps"
			}
			h.create(testApp{name: "root", path: path, repoURL: repo.Dir, automated: true, finalizers: []string{FinalizerResources}})
			h.waitApp("root", 120*time.Second, "Synced and Healthy", syncedHealthy)
			if tc.appOfApps {
				h.waitApp("widgets", 60*time.Second, "Synced and Healthy", syncedHealthy)
			}
			testenv.Eventually(t, 30*time.Second, "the operator's finalizer on both widgets", func() bool { return op.finalized() == 2 })
			if err := h.c.Delete(context.Background(), h.app("root")); err != nil {
				t.Fatal(err)
			}
			if tc.stuck {
				checkStuck(t, h, op, group)
				return
			}
			testenv.Eventually(t, 90*time.Second, "the root app gone", func() bool { return h.app("root") == nil })
			op.checkOrder(t)
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
// and says so, then clears it by hand and checks the app goes.
func checkStuck(t *testing.T, h *harness, op *widgetOperator, group string) {
	t.Helper()
	app := h.waitApp("root", 60*time.Second, "DeletionStalled", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionDeletionStalled)
	})
	msg := conditionMessage(app, v1alpha1.ApplicationConditionDeletionStalled)
	for _, want := range []string{"Widget " + h.ns + "/a", "finalizer " + group + "/cleanup", "the controller of API group " + group} {
		if !strings.Contains(msg, want) {
			t.Errorf("DeletionStalled %q does not say %q", msg, want)
		}
	}
	if n := op.clearedCount(); n != 0 {
		t.Errorf("the operator cleared %d finalizers, want none: it was deleted first", n)
	}
	op.stop()
	for _, name := range []string{"a", "b"} {
		op.release(name)
	}
	testenv.Eventually(t, 60*time.Second, "the root app gone once the finalizers were cleared by hand", func() bool { return h.app("root") == nil })
}

// widgetOperator stands for an operator: while its Deployment exists and
// is not being deleted it puts its finalizer on widgets and clears it from
// widgets being deleted. It records when it saw each deletion.
type widgetOperator struct {
	t     *testing.T
	h     *harness
	gvr   schema.GroupVersionResource
	final string
	stop  func()

	mu sync.Mutex
	// widgetDeleted and cleared are when each widget's deletion was seen
	// and its finalizer cleared; operatorDeleted when the Deployment's
	// deletion was seen (zero until then).
	widgetDeleted   map[string]time.Time
	cleared         map[string]time.Time
	operatorDeleted time.Time
	deploymentStamp time.Time
	widgetStamps    map[string]time.Time
	withFinalizer   int
}

func startWidgetOperator(t *testing.T, h *harness, group string) *widgetOperator {
	t.Helper()
	op := &widgetOperator{
		t: t, h: h, gvr: schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}, final: group + "/cleanup",
		widgetDeleted: map[string]time.Time{}, cleared: map[string]time.Time{}, widgetStamps: map[string]time.Time{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				op.reconcile(ctx)
			}
		}
	}()
	var once sync.Once
	op.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(op.stop)
	return op
}

// reconcile is one pass of the operator. It lists the widgets before it
// reads its Deployment: a widget seen being deleted is then never cleared
// by an operator whose deletion came first.
func (op *widgetOperator) reconcile(ctx context.Context) {
	list, err := op.h.env.Dynamic.Resource(op.gvr).Namespace(op.h.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	dep := &appsv1.Deployment{}
	err = op.h.c.Get(ctx, client.ObjectKey{Namespace: op.h.ns, Name: "widget-operator"}, dep)
	running := err == nil && dep.DeletionTimestamp == nil
	op.mu.Lock()
	defer op.mu.Unlock()
	if err == nil && dep.DeletionTimestamp != nil && op.operatorDeleted.IsZero() {
		op.operatorDeleted, op.deploymentStamp = time.Now(), dep.DeletionTimestamp.Time
	}
	if !running {
		return
	}
	op.withFinalizer = 0
	for i := range list.Items {
		w := &list.Items[i]
		has := slices.Contains(w.GetFinalizers(), op.final)
		if has {
			op.withFinalizer++
		}
		switch {
		case w.GetDeletionTimestamp() == nil && !has:
			w.SetFinalizers(append(w.GetFinalizers(), op.final))
			_, _ = op.h.env.Dynamic.Resource(op.gvr).Namespace(op.h.ns).Update(ctx, w, metav1.UpdateOptions{})
		case w.GetDeletionTimestamp() != nil && has:
			if _, seen := op.widgetDeleted[w.GetName()]; !seen {
				op.widgetDeleted[w.GetName()], op.widgetStamps[w.GetName()] = time.Now(), w.GetDeletionTimestamp().Time
			}
			w.SetFinalizers(slices.DeleteFunc(w.GetFinalizers(), func(f string) bool { return f == op.final }))
			if _, err := op.h.env.Dynamic.Resource(op.gvr).Namespace(op.h.ns).Update(ctx, w, metav1.UpdateOptions{}); err == nil {
				op.cleared[w.GetName()] = time.Now()
			}
		}
	}
}

func (op *widgetOperator) finalized() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.withFinalizer
}

func (op *widgetOperator) clearedCount() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return len(op.cleared)
}

// checkOrder checks that the operator cleared both widgets' finalizers
// before its own deletion began, as the deletion timestamps say too.
func (op *widgetOperator) checkOrder(t *testing.T) {
	t.Helper()
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.cleared) != 2 {
		t.Fatalf("the operator cleared the finalizers of %v, want both widgets", op.cleared)
	}
	if op.operatorDeleted.IsZero() {
		t.Fatal("the operator's Deployment was never seen being deleted")
	}
	for name, at := range op.cleared {
		if !at.Before(op.operatorDeleted) {
			t.Errorf("widget %s cleared at %s, not before the operator's deletion was seen at %s", name, at, op.operatorDeleted)
		}
		if stamp := op.widgetStamps[name]; stamp.After(op.deploymentStamp) {
			t.Errorf("widget %s deletionTimestamp %s after the operator's %s", name, stamp, op.deploymentStamp)
		}
	}
}

// release clears the operator's finalizer from a widget by hand.
func (op *widgetOperator) release(name string) {
	op.t.Helper()
	ri := op.h.env.Dynamic.Resource(op.gvr).Namespace(op.h.ns)
	w, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		op.t.Fatalf("widget %s: %v", name, err)
	}
	w.SetFinalizers(nil)
	if _, err := ri.Update(context.Background(), w, metav1.UpdateOptions{}); err != nil {
		op.t.Fatalf("release widget %s: %v", name, err)
	}
}
