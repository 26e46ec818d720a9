package kube

import (
	"context"
	"fmt"
	"maps"
	stdsync "sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/testenv"
)

// creationFixture is one object whose creation is checked both ways.
type creationFixture struct {
	// Local: CreationCheck.Valid answers true. Server: the API server's
	// dry run accepts it.
	Local  bool           `json:"local"`
	Server bool           `json:"server"`
	Object map[string]any `json:"object"`
}

// createOpts are the options of a dry run of a creation, as the sync's.
var createOpts = ApplyOptions{Mode: ClientSideApply, DryRun: true, Known: true}

// TestCreationCheckAgreesWithServer: for each fixture, the local check
// and the API server's dry run of the creation give the verdicts the
// fixture states, and the local check never accepts what the server
// refuses.
func TestCreationCheckAgreesWithServer(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	ns := env.Namespace(t)
	c, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	testenv.EachFixture(t, "creation", func(t *testing.T, f *creationFixture) {
		obj := &unstructured.Unstructured{Object: f.Object}
		obj.SetNamespace(ns)
		local := c.CreationCheck().Valid(ctx, obj, createOpts)
		_, serr := c.Apply(ctx, obj, createOpts)
		if local && serr != nil {
			t.Fatalf("checked valid locally, but the server refuses it: %v", serr)
		}
		if local != f.Local || (serr == nil) != f.Server {
			t.Errorf("local check %v (want %v), server dry run error %v (want accepted: %v)", local, f.Local, serr, f.Server)
		}
	})
}

// TestCreationCheckDefersToServer: an object the schema accepts is left
// to the server's dry run wherever more than the schema decides.
func TestCreationCheckDefersToServer(t *testing.T) {
	env := testenv.Get(t)
	ctx := t.Context()
	c, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	group := "creation.wavecd.test"
	specSchema := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}},
	}}
	celSchema := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}},
			"x-kubernetes-validations": []any{map[string]any{"rule": "self.size < 10"}}},
	}}
	installCRD(t, c, testenv.CRD(group, "Gadget", specSchema))
	installCRD(t, c, testenv.CRD(group, "Widget", specSchema))
	installCRD(t, c, testenv.CRD(group, "Rule", celSchema))
	installWebhook(t, c, group, "widgets")
	ns := env.Namespace(t)
	quotaNS := env.Namespace(t)
	quota := crObject("v1", "ResourceQuota", quotaNS, "pods", map[string]any{"hard": map[string]any{"pods": "10"}})
	if _, err := c.Apply(ctx, quota, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	gadget := func(ns string) *unstructured.Unstructured {
		return crObject(group+"/v1", "Gadget", ns, "g", map[string]any{"size": int64(3)})
	}
	for name, tc := range map[string]struct {
		obj  *unstructured.Unstructured
		opts func(*ApplyOptions)
		want bool
	}{
		"a kind the schema alone decides":        {obj: gadget(ns), want: true},
		"a kind an admission webhook matches":    {obj: crObject(group+"/v1", "Widget", ns, "w", map[string]any{"size": int64(3)})},
		"a kind with CEL rules":                  {obj: crObject(group+"/v1", "Rule", ns, "r", map[string]any{"size": int64(3)})},
		"a namespace with a ResourceQuota":       {obj: gadget(quotaNS)},
		"a namespace that does not exist":        {obj: gadget("creation-check-missing")},
		"a built-in kind":                        {obj: crObject("v1", "ConfigMap", ns, "cm", nil)},
		"server-side apply":                      {obj: gadget(ns), opts: func(o *ApplyOptions) { o.Mode = ServerSideApply }},
		"an object that exists":                  {obj: gadget(ns), opts: func(o *ApplyOptions) { o.Live = gadget(ns) }},
		"a real write, not a dry run":            {obj: gadget(ns), opts: func(o *ApplyOptions) { o.DryRun = false }},
		"strict validation off (Validate=false)": {obj: gadget(ns), opts: func(o *ApplyOptions) { o.SkipValidation = true }},
	} {
		t.Run(name, func(t *testing.T) {
			opts := createOpts
			if tc.opts != nil {
				tc.opts(&opts)
			}
			if got := c.CreationCheck().Valid(ctx, tc.obj, opts); got != tc.want {
				t.Errorf("Valid = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCreationCheckRequests: checking a root's worth of child
// Applications reads a fixed handful of facts, and creates nothing.
func TestCreationCheckRequests(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	ns := env.Namespace(t)
	counts := map[string]int{}
	var mu stdsync.Mutex
	cfg := *env.Config
	CountRequests(&cfg, func(verb, resource string) {
		mu.Lock()
		defer mu.Unlock()
		counts[verb+" "+resource]++
	})
	c, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mapping(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clear(counts)
	mu.Unlock()
	check := c.CreationCheck()
	for i := range 50 {
		app := crObject("argoproj.io/v1alpha1", "Application", ns, fmt.Sprintf("child-%02d", i), map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": "https://git.example.com/apps.git", "path": "apps"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "apps"},
		})
		if !check.Valid(t.Context(), app, createOpts) {
			t.Fatalf("child %d not checked locally", i)
		}
	}
	mu.Lock()
	got := maps.Clone(counts)
	mu.Unlock()
	delete(got, "get nonresource")
	total := 0
	for _, n := range got {
		total += n
	}
	if got["create applications"] != 0 || total > 9 {
		t.Errorf("requests for 50 checks: %v, want at most 9 and no creation", got)
	}
}

func crObject(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	if spec != nil {
		obj.Object["spec"] = spec
	}
	return obj
}

// installCRD applies crd, waits until its kind is served, and deletes it
// when the test ends.
func installCRD(t *testing.T, c *Cluster, crd *unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := c.Apply(ctx, crd, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), RefOf(crd), DeleteOptions{}) })
	if err := c.WaitEstablished(ctx, crd.GetName(), time.Minute); err != nil {
		t.Fatal(err)
	}
}

// installWebhook registers a validating webhook for creating resource of
// group that nothing answers; failurePolicy Ignore keeps the server's
// dry run passing, so only the local check can tell the webhook is there.
func installWebhook(t *testing.T, c *Cluster, group, resource string) {
	t.Helper()
	vwc := crObject("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "", "creation-check-"+resource, nil)
	vwc.Object["webhooks"] = []any{map[string]any{
		"name":                    resource + "." + group,
		"clientConfig":            map[string]any{"url": "https://127.0.0.1:1/never"},
		"rules":                   []any{map[string]any{"apiGroups": []any{group}, "apiVersions": []any{"*"}, "resources": []any{resource}, "operations": []any{"CREATE"}}},
		"failurePolicy":           "Ignore",
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"timeoutSeconds":          int64(1),
	}}
	if _, err := c.Apply(t.Context(), vwc, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), RefOf(vwc), DeleteOptions{}) })
}
