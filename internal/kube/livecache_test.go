package kube

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var configMapGK = schema.GroupKind{Kind: "ConfigMap"}

// trackedConfigMap creates a ConfigMap that tracking says belongs to app
// (or to nobody, for app "").
func trackedConfigMap(t *testing.T, env *testenv.Env, ns, name, app string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"v": "1"}}
	if app != "" {
		cm.Annotations = map[string]string{AnnotationTrackingID: app + ":/ConfigMap:" + ns + "/" + name}
	}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

func TestLiveCacheServesTrackedObjectsFromWatches(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	cluster, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	trackedConfigMap(t, env, ns, "a-1", "a")
	trackedConfigMap(t, env, ns, "a-2", "a")
	trackedConfigMap(t, env, ns, "b-1", "b")
	trackedConfigMap(t, env, ns, "untracked", "")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := NewLiveCache(cluster)
	events := make(chan string, 16)
	c.Start(ctx, func(gk schema.GroupKind, inf toolscache.SharedIndexInformer) {
		_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
			events <- obj.(*unstructured.Unstructured).GetName()
		}})
	})
	if c.Cached(configMapGK) {
		t.Fatal("a kind nobody asked for is cached")
	}
	if err := c.Ensure([]schema.GroupKind{configMapGK}); err != nil {
		t.Fatal(err)
	}
	list := func(app string) []*unstructured.Unstructured {
		t.Helper()
		objs, err := c.ListTracked(ctx, Tracking{AppName: app}, ListOptions{Kinds: []schema.GroupKind{configMapGK}})
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	if got := names(list("a")); !slices.Equal(got, []string{"a-1", "a-2"}) {
		t.Errorf("app a's objects = %v, want [a-1 a-2]", got)
	}
	if !c.Cached(configMapGK) {
		t.Fatal("ConfigMaps are not cached after a listing waited for the informer")
	}
	objs := list("b")
	if got := names(objs); !slices.Equal(got, []string{"b-1"}) {
		t.Fatalf("app b's objects = %v, want [b-1]", got)
	}
	if objs[0].GetKind() != "ConfigMap" || objs[0].GetManagedFields() != nil {
		t.Errorf("cached object: kind %q, managedFields %v; want the kind set and no managedFields", objs[0].GetKind(), objs[0].GetManagedFields())
	}
	objs[0].SetName("changed by the caller")
	if got := names(list("b")); !slices.Equal(got, []string{"b-1"}) {
		t.Errorf("a caller's change reached the cache: %v", got)
	}

	// A change made in the cluster reaches the cache and the event handler.
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "b-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-events:
		if name != "b-1" {
			t.Errorf("update event for %s, want b-1", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no update event within 10s")
	}
	if v := list("b")[0].Object["data"].(map[string]any)["v"]; v != "2" {
		t.Errorf("cached data.v = %v after the update, want 2", v)
	}
}

func TestLiveCacheReadsUncachedKindsFromTheAPIServer(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	cluster, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	trackedConfigMap(t, env, ns, "c-1", "c")
	c := NewLiveCache(cluster) // never started: nothing is cached
	objs, err := c.ListTracked(t.Context(), Tracking{AppName: "c"}, ListOptions{Kinds: []schema.GroupKind{configMapGK}, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(objs); !slices.Equal(got, []string{"c-1"}) {
		t.Errorf("objects = %v, want [c-1]", got)
	}
}

// TestLiveCacheExists: the cache tells an object exists only once its
// kind's informer has filled, and a deleted object stops existing.
func TestLiveCacheExists(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	cluster, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	trackedConfigMap(t, env, ns, "present", "")
	c := NewLiveCache(cluster)
	if _, known := c.Exists(configMapGK, ns, "present"); known {
		t.Fatal("a kind not cached is known")
	}
	c.Start(t.Context(), nil)
	nsGK := schema.GroupKind{Kind: "Namespace"}
	if err := c.EnsureWatched([]schema.GroupKind{configMapGK, nsGK}); err != nil {
		t.Fatal(err)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitUntil("the cache fills", func() bool { return c.Cached(configMapGK) && c.Cached(nsGK) })
	for _, tc := range []struct {
		gk              schema.GroupKind
		namespace, name string
		want            bool
	}{
		{configMapGK, ns, "present", true},
		{configMapGK, ns, "absent", false},
		{nsGK, "", ns, true},
		{nsGK, "", ns + "-absent", false},
	} {
		if exists, known := c.Exists(tc.gk, tc.namespace, tc.name); exists != tc.want || !known {
			t.Errorf("%s %s/%s: exists %v known %v, want %v known", tc.gk, tc.namespace, tc.name, exists, known, tc.want)
		}
	}
	if err := env.Client.CoreV1().ConfigMaps(ns).Delete(t.Context(), "present", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil("the deleted ConfigMap stops existing", func() bool { exists, _ := c.Exists(configMapGK, ns, "present"); return !exists })
}
