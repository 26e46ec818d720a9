package controller

import (
	"context"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/testenv"
)

// hookJob is a Job hook of phase PHASE that succeeds about 2 s after its
// pod is scheduled.
const hookJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
  annotations: {argocd.argoproj.io/hook: PHASE}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`

const wave1ConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: after-wave-0
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {ready: "yes"}
`

// TestSyncResumesInANewController stops the controller while wave 0 of a
// sync with hooks waits, starts a new one, and checks that the sync
// completes with every hook created exactly once.
func TestSyncResumesInANewController(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	jobs := watchHookJobs(t, h)
	repo := testenv.NewGitRepo(t, map[string]string{
		"waves/pre.yaml":   strings.NewReplacer("NAME", "pre", "PHASE", "PreSync").Replace(hookJob),
		"waves/redis.yaml": slowDeployment,
		"waves/cm.yaml":    wave1ConfigMap,
		"waves/post.yaml":  strings.NewReplacer("NAME", "post", "PHASE", "PostSync").Replace(hookJob),
	})
	h.create(testApp{name: "waves", repoURL: repo.Dir, automated: true})
	h.waitApp("waves", 60*time.Second, "wave 0 waiting for the Deployment", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && strings.HasPrefix(op.Message, "waiting for Deployment "+h.ns+"/redis")
	})
	h.stop()
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "after-wave-0"}, &corev1.ConfigMap{}); err == nil {
		t.Fatal("wave 1 was applied before the controller stopped: the test did not stop it mid-sync")
	}
	h.runController(Options{})
	app := h.waitApp("waves", 60*time.Second, "the sync to succeed", func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "after-wave-0"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("wave 1 after the resumed sync: %v (%s)", err, describe(app))
	}
	if d := cmp.Diff(map[string]int{"PreSync": 1, "PostSync": 1}, jobs()); d != "" {
		t.Errorf("hook Jobs created per phase (-want +got):\n%s", d)
	}
}

// watchHookJobs watches the Jobs of h's namespace; the function it returns
// counts the distinct Jobs (by uid) created so far per hook phase.
func watchHookJobs(t *testing.T, h *harness) func() map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := h.env.Client.BatchV1().Jobs(h.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu stdsync.Mutex
	seen := map[string]map[types.UID]bool{}
	go func() {
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(metav1.Object)
			if !ok || ev.Type != watch.Added {
				continue
			}
			var phases []string
			for _, t := range hook.Types(obj) {
				phases = append(phases, string(t))
			}
			phase := strings.Join(phases, ",")
			mu.Lock()
			if seen[phase] == nil {
				seen[phase] = map[types.UID]bool{}
			}
			seen[phase][obj.GetUID()] = true
			mu.Unlock()
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for phase, uids := range seen {
			out[phase] = len(uids)
		}
		return out
	}
}

// TestWaitIsExplained checks that a wave waiting on a pod that can never
// be scheduled says why in operationState.message.
func TestWaitIsExplained(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	unschedulable := "      nodeSelector: {wavecd.io/no-such-label: \"true\"}\n      containers:"
	repo := testenv.NewGitRepo(t, map[string]string{
		"waves/redis.yaml": strings.Replace(slowDeployment, "      containers:", unschedulable, 1),
		"waves/cm.yaml":    wave1ConfigMap,
	})
	h.create(testApp{name: "waves", repoURL: repo.Dir, automated: true})
	app := h.waitApp("waves", 60*time.Second, "a message naming the unschedulable pod", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && strings.Contains(op.Message, "Pending: ")
	})
	msg := app.Status.OperationState.Message
	for _, want := range []string{"waiting for Deployment " + h.ns + "/redis: 0/1 ready", "pod redis-", "didn't match Pod's node affinity/selector"} {
		if !strings.Contains(msg, want) {
			t.Errorf("operationState.message = %q, want it to contain %q", msg, want)
		}
	}
}

// TestGenerateNameHookAdoptedAfterRestart stops the controller while a
// generateName PreSync hook runs and starts a new one: the new controller
// finds the hook the first one created and waits on it instead of
// creating another.
func TestGenerateNameHookAdoptedAfterRestart(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	jobs := watchHookJobs(t, h)
	slowHook := strings.Replace(exampleHooks["hooks/presync.yaml"], "    spec:\n",
		"    metadata:\n      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 6s}\n    spec:\n", 1)
	repo := testenv.NewGitRepo(t, map[string]string{"schema/presync.yaml": slowHook, "schema/cm.yaml": exampleHooks["hooks/cm.yaml"]})
	h.create(testApp{name: "schema", repoURL: repo.Dir, automated: true})
	h.waitApp("schema", 60*time.Second, "the PreSync hook to run", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == v1alpha1.OperationRunning && jobs()["PreSync"] == 1
	})
	h.stop()
	h.runController(Options{})
	app := h.waitApp("schema", 60*time.Second, "the sync to succeed", func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	if d := cmp.Diff(map[string]int{"PreSync": 1}, jobs()); d != "" {
		t.Errorf("hook Jobs created per phase (-want +got):\n%s\n%s", d, describe(app))
	}
}
