package cli

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/testenv"
)

func hookStrategy() *v1alpha1.SyncStrategy {
	return &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}}
}

// TestAppSyncWritesOperation checks the operation `app sync --async` writes.
func TestAppSyncWritesOperation(t *testing.T) {
	tests := map[string]struct {
		args []string
		want *v1alpha1.Operation
	}{
		"defaults come from the app's sync policy": {
			args: []string{"sync", "guestbook", "--async"},
			want: &v1alpha1.Operation{
				Sync:        &v1alpha1.SyncOperation{SyncStrategy: hookStrategy(), SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
				InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"},
			},
		},
		"flags": {
			args: []string{"sync", "guestbook", "--async", "--revision", "0d521c6", "--prune", "--dry-run",
				"--resource", "apps:Deployment:guestbook-ui", "--resource", ":Service:guestbook/guestbook-ui",
				"--sync-option", "Validate=false", "--server-side", "--strategy", "apply", "--force",
				"--retry-limit", "3", "--username", "alice"},
			want: &v1alpha1.Operation{
				Sync: &v1alpha1.SyncOperation{
					Revision: "0d521c6", Prune: true, DryRun: true,
					SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: true}},
					Resources: []v1alpha1.SyncOperationResource{
						{Kind: "Service", Namespace: "guestbook", Name: "guestbook-ui"},
						{Group: "apps", Kind: "Deployment", Namespace: "guestbook", Name: "guestbook-ui"},
					},
					SyncOptions: v1alpha1.SyncOptions{"Validate=false", "ServerSideApply=true"},
				},
				InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"},
				Retry:       v1alpha1.RetryStrategy{Limit: 3, Backoff: &v1alpha1.Backoff{Duration: "5s", MaxDuration: "3m0s", Factor: ptrTo(int64(2))}},
			},
		},
		"resource globs expand to the app's objects": {
			args: []string{"sync", "guestbook", "--async", "--resource", "*:*:guestbook-ui"},
			want: &v1alpha1.Operation{
				Sync: &v1alpha1.SyncOperation{
					SyncStrategy: hookStrategy(), SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"},
					Resources: []v1alpha1.SyncOperationResource{
						{Kind: "Service", Namespace: "guestbook", Name: "guestbook-ui"},
						{Group: "apps", Kind: "Deployment", Namespace: "guestbook", Name: "guestbook-ui"},
					},
				},
				InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, "guestbook")
			if _, errOut, err := runApp(t, ns, tc.args...); err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			app := getApp(t, c, ns, "guestbook")
			if diff := cmp.Diff(tc.want, app.Operation); diff != "" {
				t.Errorf("operation (-want +got):\n%s", diff)
			}
			if app.Status.OperationState != nil {
				t.Errorf("status.operationState = %+v, want it cleared for the new operation", app.Status.OperationState)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestAppSyncWaits runs sync while a fake controller runs the operation.
func TestAppSyncWaits(t *testing.T) {
	tests := map[string]struct {
		final    opStep
		wantCode int // 0: success
		golden   string
	}{
		"succeeded": {final: opStep{v1alpha1.OperationSucceeded, "successfully synced (all tasks run)"}, golden: "app-sync-succeeded.txt"},
		"failed":    {final: opStep{v1alpha1.OperationFailed, "one or more objects failed to apply"}, wantCode: 1},
		"errored":   {final: opStep{v1alpha1.OperationError, "cannot reach the cluster"}, wantCode: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, "guestbook")
			done := make(chan struct{})
			go func() {
				defer close(done)
				playController(t, c, ns, "guestbook",
					opStep{v1alpha1.OperationRunning, "waiting for healthy state of apps/Deployment/guestbook-ui"}, tc.final)
			}()
			out, errOut, err := runApp(t, ns, "sync", "guestbook", "--timeout", "60")
			<-done
			if code := exitCode(err); code != tc.wantCode {
				t.Fatalf("exit code %d (%v), want %d\nstderr: %s", code, err, tc.wantCode, errOut)
			}
			for _, want := range []string{"Running     waiting for healthy state", string(tc.final.phase) + " " + tc.final.message} {
				if !strings.Contains(strings.Join(strings.Fields(errOut), " "), strings.Join(strings.Fields(want), " ")) {
					t.Errorf("progress on stderr lacks %q:\n%s", want, errOut)
				}
			}
			if !strings.Contains(out, "Phase:              "+string(tc.final.phase)) {
				t.Errorf("final state on stdout lacks the phase:\n%s", out)
			}
			if tc.golden != "" {
				assertGolden(t, tc.golden, normalize(out, ns))
			}
		})
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	return ExitCode(err)
}

// TestAppSyncRefuses covers syncs that must not write an operation.
func TestAppSyncRefuses(t *testing.T) {
	tests := map[string]struct {
		app     string
		prepare func(app *v1alpha1.Application)
		args    []string
		wantErr string
	}{
		"operation already running": {
			app:     "guestbook",
			prepare: func(app *v1alpha1.Application) { app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}} },
			args:    []string{"sync", "guestbook", "--async"},
			wantErr: `application "guestbook" in namespace "NS": another operation is already in progress`, // NS: the test namespace
		},
		"other revision under automated sync": {
			app: "root", args: []string{"sync", "root", "--revision", "dev", "--async"},
			wantErr: "cannot sync to dev: auto-sync currently set to main",
		},
		"malformed --resource": {
			app: "guestbook", args: []string{"sync", "guestbook", "--resource", "apps/Deployment/web", "--async"},
			wantErr: `invalid resource "apps/Deployment/web": want GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME`,
		},
		"--resource with an empty name": {
			app: "guestbook", args: []string{"sync", "guestbook", "--resource", "apps:Deployment:ns/", "--async"},
			wantErr: `invalid resource "apps:Deployment:ns/"`,
		},
		"--resource matching nothing": {
			app: "guestbook", args: []string{"sync", "guestbook", "--resource", "apps:StatefulSet:db", "--async"},
			wantErr: `no object of application "guestbook" matches --resource apps:StatefulSet:db`,
		},
		"unknown strategy": {
			app: "guestbook", args: []string{"sync", "guestbook", "--strategy", "yolo", "--async"},
			wantErr: `unknown sync strategy "yolo": use hook or apply`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, tc.app)
			before := getApp(t, c, ns, tc.app)
			if tc.prepare != nil {
				orig := before.DeepCopy()
				tc.prepare(before)
				if err := c.Patch(t.Context(), before, client.MergeFrom(orig)); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := runApp(t, ns, tc.args...)
			if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), ns, "NS"), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			after := getApp(t, c, ns, tc.app)
			if diff := cmp.Diff(before.Operation, after.Operation); diff != "" {
				t.Errorf("operation changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAppSyncTimeout(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "guestbook")
	_, _, err := runApp(t, ns, "sync", "guestbook", "--timeout", "1")
	if code := exitCode(err); code != 1 || !strings.Contains(err.Error(), `timed out (1s) waiting for application "guestbook" to finish its operation`) {
		t.Fatalf("exit code %d, error %v; want 1 and a timeout", code, err)
	}
}

// TestAppSyncSaysNoControllerRuns: with no controller running, a sync
// that waits says within seconds that nothing started its operation.
func TestAppSyncSaysNoControllerRuns(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "guestbook")
	_, stderr, err := runApp(t, ns, "sync", "guestbook", "--timeout", "7")
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit code %d, error %v; want 1 and a timeout", code, err)
	}
	want := "warning: no controller has started the operation after 5s: is a wavecd controller"
	if !strings.Contains(stderr, want) || strings.Count(stderr, "warning:") != 1 {
		t.Errorf("stderr = %q, want one warning containing %q", stderr, want)
	}
}

func TestAppRollback(t *testing.T) {
	tests := map[string]struct {
		app, id string
		want    *v1alpha1.Operation
		wantErr string
	}{
		"history entry": {
			app: "guestbook", id: "0",
			want: &v1alpha1.Operation{
				Sync: &v1alpha1.SyncOperation{
					Revision:     "0d521c6e049889134f3122eb32d7ed342f43ca0d",
					Source:       &v1alpha1.ApplicationSource{RepoURL: "https://github.com/argoproj/argocd-example-apps.git", Path: "guestbook", TargetRevision: "HEAD"},
					SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{}},
					SyncOptions:  v1alpha1.SyncOptions{"CreateNamespace=true"},
				},
				InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"},
			},
		},
		"refused under automated sync": {app: "root", id: "0", wantErr: "rollback cannot be initiated when auto-sync is enabled"},
		"unknown history ID":           {app: "guestbook", id: "7", wantErr: `application "guestbook" does not have deployment with id 7`},
		"not a number":                 {app: "guestbook", id: "last", wantErr: `invalid history ID "last"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, tc.app)
			_, _, err := runApp(t, ns, "rollback", tc.app, tc.id, "--async")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if op := getApp(t, c, ns, tc.app).Operation; op != nil {
					t.Errorf("a refused rollback wrote an operation: %+v", op)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, getApp(t, c, ns, tc.app).Operation); diff != "" {
				t.Errorf("operation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppWait(t *testing.T) {
	tests := map[string]struct {
		app      string
		args     []string
		wantCode int
		wantErr  string
	}{
		"already synced and healthy": {app: "guestbook", args: []string{"--sync", "--health"}},
		"health only, not healthy":   {app: "broken", args: []string{"--health", "--timeout", "1"}, wantCode: 1, wantErr: "timed out (1s)"},
		"accepts degraded":           {app: "broken", args: []string{"--health", "--degraded"}},
		"operation in progress": {
			app: "child-a", args: []string{"--operation", "--timeout", "1"}, wantCode: 1,
			wantErr: `waiting for application "child-a" to be without a running operation`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, tc.app)
			out, _, err := runApp(t, ns, append([]string{"wait", tc.app}, tc.args...)...)
			if code := exitCode(err); code != tc.wantCode || (tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("exit code %d, error %v; want %d and %q", code, err, tc.wantCode, tc.wantErr)
			}
			if !strings.Contains(out, "Name:               "+ns+"/"+tc.app) {
				t.Errorf("final state not printed:\n%s", out)
			}
		})
	}
}

// TestAppWaitFollowsChanges waits for health while the app turns healthy:
// the status changes only once the command has printed the first state. A
// change to another app in the namespace must not count.
func TestAppWaitFollowsChanges(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "broken", "guestbook")
	setHealth(t, c, ns, "broken", "Progressing")
	var out, errOut testenv.SyncBuffer
	root := NewRootCommand(Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs([]string{"app", "wait", "broken", "--health", "--timeout", "30", "--kubeconfig", testenv.Get(t).Kubeconfig, "-n", ns})
	result := make(chan error, 1)
	go func() { result <- root.ExecuteContext(t.Context()) }()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "health=Progressing"), nil
	})
	if err != nil {
		t.Fatalf("wait never printed the Progressing state: %v\n%s", err, errOut.String())
	}
	setHealth(t, c, ns, "guestbook", "Degraded")
	setHealth(t, c, ns, "broken", "Healthy")
	if err := <-result; err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "health=Healthy") {
		t.Errorf("stderr does not show the change to Healthy:\n%s", errOut.String())
	}
}

func setHealth(t *testing.T, c client.Client, ns, name string, health v1alpha1.HealthStatusCode) {
	t.Helper()
	app := getApp(t, c, ns, name)
	orig := app.DeepCopy()
	app.Status.Health = v1alpha1.AppHealthStatus{Status: health, LastTransitionTime: &metav1.Time{Time: opFinished}}
	if err := c.Patch(t.Context(), app, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

func TestAppUnknownApp(t *testing.T) {
	ns, _ := appCluster(t)
	for _, args := range [][]string{
		{"get", "nope"}, {"history", "nope"}, {"sync", "nope", "--async"}, {"rollback", "nope", "1"},
		{"wait", "nope"}, {"set", "nope", "--revision", "v2"}, {"delete", "nope", "--yes"}, {"terminate-op", "nope"},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, _, err := runApp(t, ns, args...)
			want := `application "nope" not found in namespace "` + ns + `"`
			if err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
		})
	}
}

func TestAppBadInput(t *testing.T) {
	ns, _ := appCluster(t)
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"bad output":      {[]string{"list", "-o", "csv"}, `unknown output format "csv"`},
		"bad health":      {[]string{"list", "--health", "fine"}, `invalid --health "fine": use one of Healthy, Progressing`},
		"bad selector":    {[]string{"list", "-l", "a in ("}, `invalid selector "a in ("`},
		"bad name":        {[]string{"get", "a/b/c"}, `invalid application name "a/b/c"`},
		"set nothing":     {[]string{"set", "guestbook"}, "set at least one option"},
		"no name":         {[]string{"get"}, "accepts 1 arg(s), received 0"},
		"bad propagation": {[]string{"delete", "x", "-p", "sideways", "--yes"}, `invalid propagation policy "sideways"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := runApp(t, ns, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			var ee *ExitError
			if errors.As(err, &ee) {
				t.Errorf("bad input returned an ExitError %d", ee.Code)
			}
		})
	}
}

// TestAppSyncLocal renders a folder on disk and sends its objects in the
// operation, as `argocd app sync --local` does.
func TestAppSyncLocal(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "guestbook")
	local := filepath.Join(writeFolder(t, "local", diffSettingsRed, diffNew), "local")
	if _, errOut, err := runApp(t, ns, "sync", "guestbook", "--async", "--local", local); err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut)
	}
	op := getApp(t, c, ns, "guestbook").Operation
	if op == nil || op.Sync == nil {
		t.Fatal("no sync operation written")
	}
	objs, err := application.DecodeManifests(op.Sync.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		color, _, _ := unstructured.NestedString(o.Object, "data", "color")
		got = append(got, o.GetKind()+"/"+o.GetName()+"/"+color)
	}
	slices.Sort(got)
	if want := []string{"ConfigMap/new/", "ConfigMap/settings/red"}; !slices.Equal(got, want) {
		t.Errorf("manifests %v, want %v", got, want)
	}
	_, _, err = runApp(t, ns, "sync", "guestbook", "--async", "--local", filepath.Join(local, "nope"))
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a folder that is not there: %v, want an error naming it", err)
	}
}

func TestAppTerminateOp(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns, "guestbook")
	if _, _, err := runApp(t, ns, "terminate-op", "guestbook"); err == nil || err.Error() != "Unable to terminate operation. No operation is in progress" {
		t.Fatalf("terminate-op with no operation: %v", err)
	}
	app := getApp(t, c, ns, "guestbook")
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	app.Operation = &op
	app.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now()}
	if err := c.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	out, _, err := runApp(t, ns, "terminate-op", "guestbook")
	if err != nil || out != "Application 'guestbook' operation terminating\n" {
		t.Fatalf("terminate-op: %q %v", out, err)
	}
	if got := getApp(t, c, ns, "guestbook").Status.OperationState.Phase; got != v1alpha1.OperationTerminating {
		t.Errorf("the operation's phase after terminate-op: %s", got)
	}
}
