package controller

import (
	"context"
	"os"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestDeleteHookFinalizers(t *testing.T) {
	data, err := os.ReadFile("testdata/deletehooks/finalizers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name       string              `json:"name"`
		Finalizers []string            `json:"finalizers"`
		Hooks      []map[string]string `json:"hooks"`
		Want       []string            `json:"want"`
	}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var desired []*unstructured.Unstructured
			for _, a := range c.Hooks {
				o := &unstructured.Unstructured{Object: map[string]any{}}
				o.SetAnnotations(a)
				desired = append(desired, o)
			}
			got := deleteHookFinalizers(c.Finalizers, desired)
			if d := cmp.Diff(c.Want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("finalizers (-want +got):\n%s", d)
			}
		})
	}
}

const deleteHookJob = `apiVersion: batch/v1
kind: Job
metadata:
  NAMING
  annotations:
    argocd.argoproj.io/hook: TYPE
    argocd.argoproj.io/hook-delete-policy: HookSucceeded
spec:
  template:
    spec:
      containers: [{name: main, image: alpine:latest, command: [sh, -c, "echo TYPE"]}]
      restartPolicy: Never
`

// TestDeletionHooks deletes an app with a PreDelete and a PostDelete hook
// and its resources finalizer: the PreDelete hook runs (once) before any
// object is deleted, the PostDelete one after they are all gone, both are
// deleted as their policy says, and then the app goes. Neither runs in a
// sync.
func TestDeletionHooks(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"teardown/cm.yaml":   guestbookConfigMap,
		"teardown/pre.yaml":  strings.NewReplacer("NAMING", "generateName: backup-", "TYPE", "PreDelete").Replace(deleteHookJob),
		"teardown/post.yaml": strings.NewReplacer("NAMING", "name: notify", "TYPE", "PostDelete").Replace(deleteHookJob),
	})
	h.create(testApp{name: "teardown", repoURL: repo.Dir, automated: true, finalizers: []string{v1alpha1.FinalizerResources}})
	h.waitApp("teardown", 60*time.Second, "Synced, Healthy and held by the deletion-hook finalizers", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && slices.Contains(a.Finalizers, v1alpha1.FinalizerPreDelete) && slices.Contains(a.Finalizers, v1alpha1.FinalizerPostDeleteCleanup)
	})
	// A parent's sync writes the finalizers its Git lists: the app's own
	// comparison puts the deletion-hook ones back at once, not at the next
	// periodic refresh.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		stripped := h.app("teardown")
		stripped.Finalizers = []string{v1alpha1.FinalizerResources}
		return h.c.Update(context.Background(), stripped)
	})
	if err != nil {
		t.Fatal(err)
	}
	app := h.waitApp("teardown", 15*time.Second, "held by the deletion-hook finalizers again", func(a *v1alpha1.Application) bool {
		return slices.Contains(a.Finalizers, v1alpha1.FinalizerPreDelete) && slices.Contains(a.Finalizers, v1alpha1.FinalizerPostDeleteCleanup)
	})
	events := watchTeardown(t, h)
	if jobs, err := h.env.Client.BatchV1().Jobs(h.ns).List(context.Background(), metav1.ListOptions{}); err != nil || len(jobs.Items) > 0 {
		t.Fatalf("Jobs after the sync: %v (err %v), want none: deletion hooks never run in a sync", jobs, err)
	}
	if err := h.c.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the app gone", func() bool { return h.app("teardown") == nil })
	// The hooks were gone before the app was; the test's own watch may
	// deliver their deletion a moment after the app's.
	got := events()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); got = events() {
		if slices.Contains(got, "DELETED Job notify") && slices.Contains(got, "DELETED Job backup-") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := []string{"ADDED Job backup-", "DELETED ConfigMap settings", "ADDED Job notify", "DELETED Job notify"}
	if d := cmp.Diff(want, got, cmpopts.IgnoreSliceElements(func(s string) bool { return s == "DELETED Job backup-" })); d != "" {
		t.Errorf("deletion order (-want +got):\n%s", d)
	}
	if !slices.Contains(got, "DELETED Job backup-") {
		t.Errorf("the PreDelete hook was not deleted: %v", got)
	}
}

// watchTeardown records, in order, Jobs added and deleted and ConfigMaps
// deleted in h's namespace, a generateName Job under its generateName.
func watchTeardown(t *testing.T, h *harness) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	jobs, err := h.env.Client.BatchV1().Jobs(h.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := h.env.Client.CoreV1().ConfigMaps(h.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu stdsync.Mutex
	var seen []string
	record := func(kind string, w watch.Interface, types ...watch.EventType) {
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(metav1.Object)
			if !ok || !slices.Contains(types, ev.Type) || obj.GetName() == "kube-root-ca.crt" {
				continue
			}
			name := obj.GetName()
			if g := obj.GetGenerateName(); g != "" {
				name = g
			}
			mu.Lock()
			seen = append(seen, string(ev.Type)+" "+kind+" "+name)
			mu.Unlock()
		}
	}
	go record("Job", jobs, watch.Added, watch.Deleted)
	go record("ConfigMap", cms, watch.Deleted)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
