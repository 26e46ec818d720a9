package sync

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// creations records the resource version at which watched objects were
// created: the server's own order of creation.
type creations struct {
	mu   sync.Mutex
	seen map[string]int64
}

// watchCreations watches gvr in namespace (all when empty) and records the
// creation of the objects named in want.
func (c *creations) watch(t *testing.T, ctx context.Context, gvr schema.GroupVersionResource, kind, namespace string, want map[string]bool) {
	t.Helper()
	env := testenv.Get(t)
	w, err := env.Dynamic.Resource(gvr).Namespace(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type != watch.Added || !want[kind+" "+obj.GetName()] {
				continue
			}
			rv, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
			c.mu.Lock()
			c.seen[kind+" "+obj.GetName()] = rv
			c.mu.Unlock()
		}
	}()
}

func (c *creations) order() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := slices.Collect(func(yield func(string) bool) {
		for k := range c.seen {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(names, func(a, b string) int { return int(c.seen[a] - c.seen[b]) })
	return names
}

func TestSyncOrder(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := testContext(t)
	group := ns + ".wavecd.test"
	t.Cleanup(func() {
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		_ = env.Dynamic.Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
		_ = env.Client.CoreV1().Namespaces().Delete(context.Background(), ns+"-extra", metav1.DeleteOptions{})
	})
	want := []string{
		"ConfigMap pre-hook",
		"ServiceAccount sa",
		"Secret s",
		"ConfigMap cm",
		"Namespace " + ns + "-extra",
		"ConfigMap in-extra",
		"Service svc",
		"CustomResourceDefinition widgets." + group,
		"Widget w",
		"ConfigMap late",
		"ConfigMap post-hook",
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	created := &creations{seen: map[string]int64{}}
	for _, w := range []struct {
		resource, kind, group, namespace string
	}{
		{"configmaps", "ConfigMap", "", ns},
		{"configmaps", "ConfigMap", "", ns + "-extra"},
		{"serviceaccounts", "ServiceAccount", "", ns},
		{"secrets", "Secret", "", ns},
		{"services", "Service", "", ns},
		{"namespaces", "Namespace", "", ""},
		{"customresourcedefinitions", "CustomResourceDefinition", "apiextensions.k8s.io", ""},
	} {
		created.watch(t, watchCtx, schema.GroupVersionResource{Group: w.group, Version: "v1", Resource: w.resource}, w.kind, w.namespace, wanted)
	}

	run := newSyncRun(t, ns)
	run.opts.Concurrency = 1
	run.kinds = []schema.GroupKind{configMapGK}
	st, exec := run.run(ctx, fixture(t, "sync/order.yaml", ns))
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync %s: %s", st.Phase, st.Message)
	}

	var applied []string
	for _, e := range exec.Events() {
		if e.Type == EventApplied {
			applied = append(applied, kindAndName(e.Task))
		}
	}
	if diff := cmp.Diff(want, applied); diff != "" {
		t.Errorf("apply order in the event log (-want +got):\n%s", diff)
	}

	widget, err := run.cluster.Get(ctx, kube.Ref{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}, Namespace: ns, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := strconv.ParseInt(widget.GetResourceVersion(), 10, 64)
	waitFor(t, func() bool { return len(created.order()) == len(want)-1 })
	created.mu.Lock()
	created.seen["Widget w"] = rv
	created.mu.Unlock()
	if diff := cmp.Diff(want, created.order()); diff != "" {
		t.Errorf("creation order on the server (-want +got):\n%s", diff)
	}
}

// kindAndName turns a task ID (phase:group/kind:namespace/name) into
// "Kind name".
func kindAndName(id string) string {
	parts := strings.SplitN(id, ":", 3)
	_, kind, _ := strings.Cut(parts[1], "/")
	_, name, _ := strings.Cut(parts[2], "/")
	return kind + " " + name
}
