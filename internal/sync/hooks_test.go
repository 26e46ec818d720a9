package sync

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestHooksSurviveRestart syncs PreSync and PostSync Job hooks, stops the
// executor while the PostSync hook runs, and resumes from the saved state
// with a new executor.
func TestHooksSurviveRestart(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		// lostCreate rolls the PostSync hook back to before its creation in
		// the saved state, as if the controller died between creating the
		// hook and saving the state.
		lostCreate bool
	}{
		"saved state says the hook runs":            {},
		"saved state lost the creation of the hook": {lostCreate: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env, ns, ctx, run := setup(t)
			oldUID := createOldHook(t, ctx, ns)
			first, cancel := context.WithCancel(ctx)
			defer cancel()
			run.opts.OnEvent = func(e Event) {
				if e.Type == EventApplied && e.SyncPhase == v1alpha1.SyncPhasePostSync {
					cancel()
				}
			}
			st, exec1, err := run.runUntil(first, fixture(t, "sync/hooks.yaml", ns))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first Run() = %v, want it cancelled while the PostSync hook runs", err)
			}
			post, err := env.Client.BatchV1().Jobs(ns).Get(ctx, "post", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if post.UID == oldUID {
				t.Fatal("the PostSync hook of the earlier sync was not deleted before creation")
			}

			saved := roundTrip(t, st)
			if tc.lostCreate {
				i := slices.IndexFunc(saved.Tasks, func(ts TaskState) bool { return ts.SyncPhase == v1alpha1.SyncPhasePostSync })
				saved.Tasks[i].Phase, saved.Tasks[i].Result, saved.Tasks[i].Message = v1alpha1.TaskDryRunOK, "", ""
			}
			run.opts.OnEvent = nil
			plan, err := run.plan(ctx, fixture(t, "sync/hooks.yaml", ns))
			if err != nil {
				t.Fatal(err)
			}
			exec2, err := run.execute(ctx, plan, saved)
			if err != nil || saved.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("resumed sync: %v %s: %s", err, saved.Phase, saved.Message)
			}

			hookApplies := func(events []Event) []string {
				var out []string
				for _, e := range events {
					if e.Type == EventApply && e.SyncPhase != v1alpha1.SyncPhaseSync {
						out = append(out, string(e.SyncPhase))
					}
				}
				return out
			}
			if got := hookApplies(exec1.Events()); !slices.Equal(got, []string{"PreSync", "PostSync"}) {
				t.Errorf("hooks created by the first executor = %v, want [PreSync PostSync]", got)
			}
			if got := hookApplies(exec2.Events()); len(got) != 0 {
				t.Errorf("hooks created by the resumed executor = %v, want none", got)
			}
			after, err := env.Client.BatchV1().Jobs(ns).Get(ctx, "post", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.UID != post.UID || len(after.Finalizers) != 0 || after.Status.Succeeded != 1 {
				t.Errorf("PostSync hook uid %s (was %s), finalizers %v, succeeded %d: want the same completed Job without finalizer",
					after.UID, post.UID, after.Finalizers, after.Status.Succeeded)
			}
			// HookSucceeded: the PreSync Job is deleted once the sync succeeded.
			waitFor(t, func() bool {
				jobs, err := env.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
				return err == nil && !slices.ContainsFunc(jobs.Items, func(j batchv1.Job) bool { return strings.HasPrefix(j.Name, "pre-") })
			})
		})
	}
}

// createOldHook creates the PostSync hook of an "earlier sync", with the
// hook finalizer, and returns its uid.
func createOldHook(t *testing.T, ctx context.Context, ns string) types.UID {
	t.Helper()
	env := testenv.Get(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "post", Finalizers: []string{FinalizerHook}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		}}},
	}
	created, err := env.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created.UID
}

// roundTrip encodes st to JSON and back, as the controller persists it.
func roundTrip(t *testing.T, st *State) *State {
	t.Helper()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	out := &State{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHookFailedDeletePolicy(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, _ := run.run(ctx, fixture(t, "sync/hook-fails.yaml", ns))
	if st.Phase != v1alpha1.OperationFailed {
		t.Fatalf("sync %s: %s, want Failed", st.Phase, st.Message)
	}
	waitFor(t, func() bool {
		_, err := env.Client.BatchV1().Jobs(ns).Get(ctx, "fails", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after a failed PreSync hook: err = %v, want NotFound", err)
	}
	kept, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "on-fail", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("SyncFail hook with the default policy: %v", err)
	}
	if len(kept.Finalizers) != 0 {
		t.Errorf("SyncFail hook finalizers = %v, want none", kept.Finalizers)
	}
}

// wantTerminated checks a sync of sync/long-hook.yaml that was
// terminated while its hook ran: Failed, the hook deleted, the ConfigMap
// after it never applied.
func wantTerminated(ctx context.Context, t *testing.T, env *testenv.Env, ns string, st *State) {
	t.Helper()
	if st.Phase != v1alpha1.OperationFailed || st.Message != "Operation terminated" {
		t.Errorf("state %s: %q, want Failed: Operation terminated", st.Phase, st.Message)
	}
	waitFor(t, func() bool {
		_, err := env.Client.BatchV1().Jobs(ns).Get(ctx, "long", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap of a terminated sync: err = %v, want NotFound", err)
	}
}

// TestTerminateOption: closing Options.Terminate while a hook runs ends
// the sync at once, as a user's terminate-op does.
func TestTerminateOption(t *testing.T) {
	env, ns, ctx, run := setup(t)
	terminate := make(chan struct{})
	run.opts.Terminate = terminate
	run.opts.OnEvent = func(e Event) {
		if e.Type == EventApplied && e.SyncPhase == v1alpha1.SyncPhasePreSync {
			close(terminate)
		}
	}
	st, _, err := run.runUntil(ctx, fixture(t, "sync/long-hook.yaml", ns))
	if !errors.Is(err, ErrTerminated) {
		t.Fatalf("Run() = %v, want ErrTerminated", err)
	}
	wantTerminated(ctx, t, env, ns, st)
}

func TestTerminate(t *testing.T) {
	env, ns, ctx, run := setup(t)
	running, cancel := context.WithCancel(ctx)
	defer cancel()
	run.opts.OnEvent = func(e Event) {
		if e.Type == EventApplied && e.SyncPhase == v1alpha1.SyncPhasePreSync {
			cancel()
		}
	}
	st, exec, err := run.runUntil(running, fixture(t, "sync/long-hook.yaml", ns))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() = %v, want it cancelled while the hook runs", err)
	}
	if err := exec.Terminate(ctx, st); err != nil {
		t.Fatal(err)
	}
	wantTerminated(ctx, t, env, ns, st)
}

// TestCheckpointBeforeGenerateNameHooks: the state that names a
// generateName hook is handed to Checkpoint before the hook exists, once
// per sync, so a controller killed right after creating the hook resumes
// the same sync (and waits on the hook) instead of naming it anew.
func TestCheckpointBeforeGenerateNameHooks(t *testing.T) {
	env, ns, ctx, run := setup(t)
	var checkpoints []State
	run.opts.Checkpoint = func(st State) {
		jobs, err := env.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Error(err)
		}
		for _, j := range jobs.Items {
			if strings.HasPrefix(j.Name, "pre-") {
				t.Errorf("hook %s created before the checkpoint", j.Name)
			}
		}
		checkpoints = append(checkpoints, st)
	}
	st, _ := run.run(ctx, fixture(t, "sync/hooks.yaml", ns))
	if len(checkpoints) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(checkpoints))
	}
	name := func(s State) string {
		i := slices.IndexFunc(s.Tasks, func(ts TaskState) bool { return ts.SyncPhase == v1alpha1.SyncPhasePreSync })
		return s.Tasks[i].Name
	}
	if got, want := name(checkpoints[0]), name(*st); got != want || !strings.HasPrefix(got, "pre-") || checkpoints[0].ID != st.ID {
		t.Errorf("checkpoint named the PreSync hook %q in sync %s, the sync ran %q in %s", got, checkpoints[0].ID, want, st.ID)
	}
}
