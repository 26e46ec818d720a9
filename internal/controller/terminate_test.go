package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// longHook is a PreSync Job whose pod runs for ten minutes.
const longHook = `apiVersion: batch/v1
kind: Job
metadata:
  name: long
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  template:
    metadata:
      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: "10m"}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`

const appConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data: {a: "1"}
`

// terminated reports whether the app's operation ended as a user's
// terminate ends it.
func terminated(a *v1alpha1.Application) bool {
	op := a.Status.OperationState
	return a.Operation == nil && op != nil && op.Phase == v1alpha1.OperationFailed && op.Message == "Operation terminated" && op.FinishedAt != nil
}

// TestTerminateOperation: a user's terminate (the operation's phase set
// to Terminating, as `argocd app terminate-op` does) ends a sync that
// waits on a hook at once: the hook is deleted, nothing after it is
// applied, and the sync is not retried. An operation that no runner runs
// ends the same way.
func TestTerminateOperation(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"long/pre.yaml": longHook, "long/cm.yaml": appConfigMap})
	h.create(testApp{name: "long", repoURL: repo.Dir, syncNow: true})
	h.waitApp("long", 60*time.Second, "the sync waiting on its PreSync hook", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == v1alpha1.OperationRunning && strings.Contains(op.Message, "Job "+h.ns+"/long")
	})
	h.setOperationPhase("long", v1alpha1.OperationTerminating)
	app := h.waitApp("long", 30*time.Second, "the sync terminated", terminated)
	if app.Status.OperationState.RetryCount != 0 {
		t.Errorf("a terminated sync was retried %d times", app.Status.OperationState.RetryCount)
	}
	testenv.Eventually(t, 30*time.Second, "the hook Job deleted", func() bool {
		err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "long"}, &batchv1.Job{})
		return apierrors.IsNotFound(err)
	})
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "app"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap after the terminated hook: %v, want NotFound", err)
	}

	// An operation recorded as running, which no runner of this
	// controller runs, terminated.
	now := metav1.Now()
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	orphan := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "orphan"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.Dir, Path: "long", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: h.ns},
		},
		Operation: &op,
		Status:    v1alpha1.ApplicationStatus{OperationState: &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationTerminating, StartedAt: now}},
	}
	if err := h.c.Create(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	h.waitApp("orphan", 30*time.Second, "the orphaned operation terminated", terminated)
}

// setOperationPhase writes the app's operation phase, as the API does.
func (h *harness) setOperationPhase(name string, phase v1alpha1.OperationPhase) {
	h.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app := h.app(name)
		app.Status.OperationState.Phase = phase
		return h.c.Update(context.Background(), app)
	})
	if err != nil {
		h.t.Fatalf("set the operation phase of %s: %v", name, err)
	}
}
