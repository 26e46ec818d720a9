package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestAppDeleteProgress deletes an app with --wait while the test, in the
// controller's place, reports the teardown's steps in the app's
// conditions: each new word is printed once, then the app goes.
func TestAppDeleteProgress(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "guestbook")
	t.Cleanup(func() { releaseApp(t, c, ns, "guestbook") })
	var out, errOut testenv.SyncBuffer
	root := NewRootCommand(Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs([]string{"app", "delete", "guestbook", "--yes", "--wait", "--timeout", "60", "--kubeconfig", testenv.Get(t).Kubeconfig, "-n", ns})
	result := make(chan error, 1)
	go func() { result <- root.ExecuteContext(t.Context()) }()
	steps := []struct{ typ, message string }{
		{v1alpha1.ApplicationConditionDeletionWait, "wave 1 (step 1 of 2): waiting for Widget " + ns + "/a (finalizer example.com/cleanup, cleared by the controller of API group example.com (it must still be running))"},
		{v1alpha1.ApplicationConditionDeletionStalled, "stalled: wave 1 (step 1 of 2) has waited 2m0s for Widget " + ns + "/a"},
		{v1alpha1.ApplicationConditionDeletionWait, "wave 0 (step 2 of 2): waiting for Deployment " + ns + "/widget-operator (finalizer foregroundDeletion, cleared by the garbage collector once the objects it owns are gone)"},
	}
	for i, step := range steps {
		err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			app := getApp(t, c, ns, "guestbook")
			if app.DeletionTimestamp == nil {
				return false, nil
			}
			orig := app.DeepCopy()
			app.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: step.typ, Message: step.message, LastTransitionTime: &metav1.Time{Time: time.Now()}}}
			if i == 1 {
				app.Status.Conditions = append(app.Status.Conditions, v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionDeletionWait, Message: steps[0].message})
			}
			return true, c.Patch(ctx, app, client.MergeFrom(orig))
		})
		if err != nil {
			t.Fatalf("report step %d: %v", i, err)
		}
		err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return strings.Contains(errOut.String(), step.message), nil
		})
		if err != nil {
			t.Fatalf("delete --wait never printed %q:\n%s", step.message, errOut.String())
		}
	}
	releaseApp(t, c, ns, "guestbook")
	if err := <-result; err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut.String())
	}
	if got := strings.Count(errOut.String(), "\n"); got != len(steps) {
		t.Errorf("stderr has %d lines, want one per step:\n%s", got, errOut.String())
	}
	if got, want := out.String(), "application '"+ns+"/guestbook' deleted\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}
