package controller

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// harness is one controller running against the test's namespace.
type harness struct {
	t    *testing.T
	env  *testenv.Env
	ns   string
	c    client.Client
	ctrl *Controller
	// stop stops ctrl before the test ends.
	stop func()
}

// startController installs the CRDs and runs a controller for a fresh
// namespace until the test ends.
func startController(t *testing.T, opts Options) *harness {
	t.Helper()
	env := testenv.Get(t)
	env.InstallCRDs(t)
	h := &harness{t: t, env: env, ns: env.Namespace(t), c: env.AppClient(t)}
	h.ctrl, h.stop = h.runController(opts)
	return h
}

// runController runs one more controller for the harness's namespace. It
// stops when the test ends, or earlier when stop is called; stop waits
// until it has stopped.
func (h *harness) runController(opts Options) (ctrl *Controller, stop func()) {
	h.t.Helper()
	opts.Namespace = h.ns
	// Controllers of parallel tests share the cluster and app names.
	opts.InstallationID = h.ns
	opts.CacheDir = h.t.TempDir()
	ctrl, err := New(h.env.Config, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return ctrl, testenv.Start(h.t, "controller", ctrl.Start)
}

// in returns a copy of h that reports to t, for subtests.
func (h *harness) in(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// apply creates an object from YAML in the harness namespace with
// NAMESPACE replaced by it.
func (h *harness) apply(manifest string) {
	h.t.Helper()
	obj := &v1alpha1.Application{}
	manifest = strings.ReplaceAll(manifest, "NAMESPACE", h.ns)
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		h.t.Fatalf("decode manifest: %v", err)
	}
	obj.Namespace = h.ns
	if err := h.c.Create(context.Background(), obj); err != nil {
		h.t.Fatalf("create application %s: %v", obj.Name, err)
	}
}

// testApp describes an Application a test creates in its namespace.
type testApp struct {
	name    string
	repoURL string
	// path in the repository (default: the app's name).
	path string
	// project (default: default).
	project     string
	automated   bool
	annotations map[string]string
	finalizers  []string
	// syncNow requests a manual sync at creation.
	syncNow bool
}

// create creates the app, syncing into the harness namespace.
func (h *harness) create(a testApp) {
	h.t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: a.name, Annotations: a.annotations, Finalizers: a.finalizers},
		Spec: v1alpha1.ApplicationSpec{
			Project:     cmp.Or(a.project, "default"),
			Source:      &v1alpha1.ApplicationSource{RepoURL: a.repoURL, Path: cmp.Or(a.path, a.name), TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: h.ns},
		},
	}
	if a.automated {
		app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}
	}
	if a.syncNow {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	}
	if err := h.c.Create(context.Background(), app); err != nil {
		h.t.Fatalf("create application %s: %v", a.name, err)
	}
}

func (h *harness) app(name string) *v1alpha1.Application {
	h.t.Helper()
	app := &v1alpha1.Application{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		h.t.Fatal(err)
	}
	return app
}

// waitApp polls the app until cond holds.
func (h *harness) waitApp(name string, timeout time.Duration, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *v1alpha1.Application
	for time.Now().Before(deadline) {
		last = h.app(name)
		if last != nil && cond(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.t.Fatalf("app %s: timed out after %s waiting for %s; last status: %s", name, timeout, what, describe(last))
	return nil
}

func describe(app *v1alpha1.Application) string {
	if app == nil {
		return "(no app)"
	}
	s := fmt.Sprintf("sync=%s health=%s revision=%s history=%d", app.Status.Sync.Status, app.Status.Health.Status,
		app.Status.Sync.Revision, len(app.Status.History))
	if app.Operation != nil {
		s += " operation requested"
	}
	if op := app.Status.OperationState; op != nil {
		s += fmt.Sprintf(" op=%s %q", op.Phase, op.Message)
	}
	for _, c := range app.Status.Conditions {
		s += fmt.Sprintf(" condition %s: %s", c.Type, c.Message)
	}
	return s
}

func syncedHealthy(app *v1alpha1.Application) bool {
	return app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && app.Status.Health.Status == "Healthy" &&
		app.Operation == nil && (app.Status.OperationState == nil || app.Status.OperationState.Phase.Completed())
}
