package appset

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// harness is an ApplicationSet controller (and, when asked, an Application
// controller) running against the test's namespace.
type harness struct {
	t   *testing.T
	env *testenv.Env
	ns  string
	c   client.Client
}

// harnessOptions say what runs beside the ApplicationSet controller.
type harnessOptions struct {
	// apps also runs the Application controller, which syncs the
	// generated apps and deletes their objects.
	apps bool
}

func start(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	env := testenv.Get(t)
	env.InstallCRDs(t)
	h := &harness{t: t, env: env, ns: env.Namespace(t), c: env.AppClient(t)}
	sets, err := New(env.Config, Options{Namespace: h.ns, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.run("applicationset controller", sets.Start)
	if o.apps {
		apps, err := controller.New(env.Config, controller.Options{Namespace: h.ns, InstallationID: h.ns, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		h.run("application controller", apps.Start)
	}
	return h
}

// run runs a component until the test ends.
func (h *harness) run(name string, start func(context.Context) error) {
	testenv.Start(h.t, name, start)
}

// createSet creates an ApplicationSet from YAML, with NAMESPACE and REPO
// replaced.
func (h *harness) createSet(manifest, repo string) *v1alpha1.ApplicationSet {
	h.t.Helper()
	set := &v1alpha1.ApplicationSet{}
	manifest = strings.NewReplacer("NAMESPACE", h.ns, "REPO", repo).Replace(manifest)
	if err := yaml.UnmarshalStrict([]byte(manifest), set); err != nil {
		h.t.Fatalf("decode ApplicationSet: %v", err)
	}
	set.Namespace = h.ns
	if err := h.c.Create(context.Background(), set); err != nil {
		h.t.Fatalf("create ApplicationSet %s: %v", set.Name, err)
	}
	return set
}

// updateSet changes the set with mutate, retrying on conflicts.
func (h *harness) updateSet(name string, mutate func(*v1alpha1.ApplicationSet)) {
	h.t.Helper()
	for range 10 {
		set := h.set(name)
		mutate(set)
		err := h.c.Update(context.Background(), set)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			h.t.Fatal(err)
		}
	}
	h.t.Fatalf("update ApplicationSet %s: too many conflicts", name)
}

func (h *harness) set(name string) *v1alpha1.ApplicationSet {
	h.t.Helper()
	set := &v1alpha1.ApplicationSet{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, set); err != nil {
		h.t.Fatal(err)
	}
	return set
}

// app returns the app, or nil when there is none.
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

// appNames lists the namespace's apps.
func (h *harness) appNames() []string {
	h.t.Helper()
	list := &v1alpha1.ApplicationList{}
	if err := h.c.List(context.Background(), list, client.InNamespace(h.ns)); err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Name)
	}
	return out
}

// eventually polls cond until it holds; describe says what was last seen.
func (h *harness) eventually(timeout time.Duration, what string, cond func() bool, describe func() string) {
	h.t.Helper()
	testenv.EventuallyState(h.t, timeout, what, func() (bool, string) {
		if cond() {
			return true, ""
		}
		return false, describe()
	})
}

// condition returns the set's condition of a type.
func condition(set *v1alpha1.ApplicationSet, typ string) *v1alpha1.ApplicationSetCondition {
	for i := range set.Status.Conditions {
		if set.Status.Conditions[i].Type == typ {
			return &set.Status.Conditions[i]
		}
	}
	return nil
}

func describeConditions(set *v1alpha1.ApplicationSet) string {
	var parts []string
	for _, c := range set.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  app: %s\n", name, name)
}
