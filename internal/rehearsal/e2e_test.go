package rehearsal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/testenv"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// example is the seed demo, relative to this package.
const example = "../../examples/healthcheck-poc"

// rehearsalEnv runs `wavecd up` in process against a workspace of the test.
type rehearsalEnv struct {
	t       *testing.T
	binary  string
	ws      Workspace
	repo    string
	logsDir string
	runs    int
}

func newRehearsalEnv(t *testing.T) *rehearsalEnv {
	t.Helper()
	bin := testenv.LocalClusterBinary(t)
	repo, err := filepath.Abs(example)
	if err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Dir: filepath.Join(t.TempDir(), DefaultWorkspace)}
	e := &rehearsalEnv{t: t, binary: bin, ws: ws, repo: repo, logsDir: t.TempDir()}
	t.Cleanup(func() {
		if err := (&Down{Workspace: ws.Dir, LocalCluster: bin}).Run(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	testenv.SilenceClientLogs()
	return e
}

// up returns an Up for the example; its output goes to out.
func (e *rehearsalEnv) up(settings string, out *testenv.SyncBuffer) *Up {
	e.runs++
	u := &Up{
		Out: out, Workspace: e.ws.Dir, Repo: e.repo, LocalCluster: e.binary,
		ExitWhenSettled: true, Timeout: 2 * time.Minute, StallAfter: time.Minute,
	}
	if settings != "" {
		u.Settings = filepath.Join(e.repo, "settings", settings)
	}
	logPath := filepath.Join(e.logsDir, fmt.Sprintf("controller-%d.log", e.runs))
	f, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { f.Close() })
	// The test owns the process: the controller's logs go to the workspace
	// and to a file that outlives Down, shown when the test fails.
	u.RouteLogs = func(w io.Writer) { slog.SetDefault(slog.New(slog.NewTextHandler(io.MultiWriter(w, f), nil))) }
	e.t.Cleanup(func() {
		if e.t.Failed() {
			b, _ := os.ReadFile(logPath)
			e.t.Logf("controller log %s (tail):\n%s", logPath, testenv.Tail(string(b), 40))
		}
	})
	return u
}

// run runs a rehearsal that must settle and returns its wall time.
func (e *rehearsalEnv) run(name string, u *Up, out *testenv.SyncBuffer) time.Duration {
	e.t.Helper()
	start := time.Now()
	err := u.Run(e.t.Context())
	took := time.Since(start)
	e.t.Logf("%s: wall time %s\n%s", name, took.Round(100*time.Millisecond), out.String())
	if err != nil {
		e.t.Fatalf("%s: up: %v", name, err)
	}
	return took
}

func (e *rehearsalEnv) client() client.Client {
	e.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", e.ws.Kubeconfig())
	if err != nil {
		e.t.Fatal(err)
	}
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *rehearsalEnv) supervisorPID() int {
	e.t.Helper()
	var st struct {
		SupervisorPID int `json:"supervisorPID"`
	}
	b, err := os.ReadFile(filepath.Join(e.ws.Cluster(), "state.json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.SupervisorPID == 0 {
		e.t.Fatalf("read the cluster's state.json: %v %s", err, b)
	}
	return st.SupervisorPID
}

// outcome is what the cluster says about one run of the example.
type outcome struct {
	appAHealthy  time.Time // app-a's status.health.lastTransitionTime
	appBStarted  time.Time // app-b's first sync start
	maxRestarts  int32     // of app-b's pods
	createdAfter bool      // every Application was created by this run
}

func (e *rehearsalEnv) outcome(runStart time.Time) outcome {
	e.t.Helper()
	c := e.client()
	ctx := e.t.Context()
	apps := &v1alpha1.ApplicationList{}
	if err := c.List(ctx, apps, client.InNamespace(Namespace)); err != nil {
		e.t.Fatal(err)
	}
	var o outcome
	o.createdAfter = len(apps.Items) == 3
	for _, a := range apps.Items {
		if a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Health.Status != "Healthy" || a.Operation != nil {
			e.t.Errorf("%s: %s/%s, operation %v after settling", a.Name, a.Status.Sync.Status, a.Status.Health.Status, a.Operation)
		}
		if a.CreationTimestamp.Time.Before(runStart.Truncate(time.Second)) {
			o.createdAfter = false
		}
		switch a.Name {
		case "app-a":
			if a.Status.Health.LastTransitionTime == nil {
				e.t.Fatal("app-a has no health.lastTransitionTime")
			}
			o.appAHealthy = a.Status.Health.LastTransitionTime.Time
		case "app-b":
			switch {
			case len(a.Status.History) > 0 && a.Status.History[0].DeployStartedAt != nil:
				o.appBStarted = a.Status.History[0].DeployStartedAt.Time
			case a.Status.OperationState != nil:
				o.appBStarted = a.Status.OperationState.StartedAt.Time
			default:
				e.t.Fatal("app-b has no sync start time")
			}
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("app-b")); err != nil {
		e.t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		e.t.Errorf("app-b runs %d pods, want 2", len(pods.Items))
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			o.maxRestarts = max(o.maxRestarts, cs.RestartCount)
		}
	}
	return o
}

// TestUpRehearsesTheHealthCheckExample runs the seed demo three times from
// an empty cluster: with Argo CD's default settings app-b syncs while
// app-a's Redis is not ready yet and its pods crash; with the Lua fix and
// with wavecd's defaults app-b waits for a Healthy app-a and never
// crashes. Then it reuses the cluster, stops a rehearsal with a cancel
// (Ctrl-C) and removes everything with Down.
func TestUpRehearsesTheHealthCheckExample(t *testing.T) {
	e := newRehearsalEnv(t)
	var pid int
	for i, tc := range []struct {
		settings  string
		appBFirst bool // app-b's sync starts before app-a is Healthy, and its pods crash
	}{
		{settings: "argo-default.yaml", appBFirst: true},
		{settings: "app-health-lua.yaml"},
		{settings: ""},
	} {
		name := "settings " + tc.settings
		if tc.settings == "" {
			name = "no settings"
		}
		out := &testenv.SyncBuffer{}
		u := e.up(tc.settings, out)
		u.Fresh = true
		var uiChecked <-chan error
		if tc.settings == "" {
			u.UI = "127.0.0.1:0"
			uiChecked = checkUI(t.Context(), out)
		}
		start := time.Now()
		e.run(name, u, out)
		if uiChecked != nil {
			if err := <-uiChecked; err != nil {
				t.Errorf("%s: web UI: %v", name, err)
			}
		}
		o := e.outcome(start)
		if !o.createdAfter {
			t.Errorf("%s: --fresh kept Applications of an earlier run", name)
		}
		if p := e.supervisorPID(); i > 0 && p == pid {
			t.Errorf("%s: --fresh reused the cluster (supervisor pid %d)", name, p)
		} else {
			pid = p
		}
		gap := o.appAHealthy.Sub(o.appBStarted)
		t.Logf("%s: app-a Healthy at %s, app-b's sync started at %s; app-b's pods restarted up to %d times",
			name, o.appAHealthy.Format(time.TimeOnly), o.appBStarted.Format(time.TimeOnly), o.maxRestarts)
		if tc.appBFirst {
			// Redis takes 10s to be ready: expect a clear gap, not a tie.
			if gap < 3*time.Second {
				t.Errorf("%s: app-b's sync started at %s, app-a Healthy at %s; want app-b well before", name, o.appBStarted, o.appAHealthy)
			}
			if o.maxRestarts < 1 {
				t.Errorf("%s: app-b's pods never restarted; want them to crash while Redis is not ready", name)
			}
			continue
		}
		if o.appBStarted.Before(o.appAHealthy) {
			t.Errorf("%s: app-b's sync started at %s, before app-a was Healthy at %s", name, o.appBStarted, o.appAHealthy)
		}
		if o.maxRestarts != 0 {
			t.Errorf("%s: app-b's pods restarted %d times; want none", name, o.maxRestarts)
		}
	}
	e.diffBesideTheRehearsal("app-a")
	e.reuseThenInterrupt(pid)
	e.notSettled()
	e.downLeavesNothing()
}

// diffBesideTheRehearsal diffs app name as `wavecd app diff` does, with no
// mirror of its own: it reads the repositories the rehearsal serves from
// argocd-cm's wavecd.mirrors, and finds the settled app in sync.
func (e *rehearsalEnv) diffBesideTheRehearsal(name string) {
	e.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", e.ws.Kubeconfig())
	if err != nil {
		e.t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := e.client().Get(e.t.Context(), client.ObjectKey{Namespace: Namespace, Name: name}, app); err != nil {
		e.t.Fatal(err)
	}
	diffs, err := compare.NewDiffer(cfg, compare.DifferOptions{CacheDir: e.t.TempDir()}).Diff(e.t.Context(), app)
	if err != nil {
		e.t.Fatalf("app diff %s beside the rehearsal: %v", name, err)
	}
	if len(diffs) > 0 {
		e.t.Errorf("app diff %s beside the rehearsal: %d objects differ, want none: %+v", name, len(diffs), diffs)
	}
}

// brokenRoot is a root app whose source path does not exist: its
// comparison fails once and nothing changes after that.
const brokenRoot = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: broken, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/example/broken.git, targetRevision: HEAD, path: missing}
  destination: {server: https://kubernetes.default.svc, namespace: broken}
  syncPolicy: {automated: {}}
`

// notSettled checks the exits of --exit-when-settled that are not a
// success: the timeout passing, and a rehearsal in which nothing changes.
func (e *rehearsalEnv) notSettled() {
	t := e.t
	out := &testenv.SyncBuffer{}
	u := e.up("", out)
	u.Timeout = time.Millisecond
	var nse *NotSettledError
	if err := u.Run(t.Context()); !errors.As(err, &nse) || nse.Reason != "not settled within 1ms" {
		t.Errorf("up with a 1ms timeout: %v, want not settled within 1ms\n%s", err, out.String())
	}

	repo := t.TempDir()
	folder.Write(t, repo, map[string]string{"apps/root.yaml": brokenRoot})
	out = &testenv.SyncBuffer{}
	u = e.up("", out)
	u.Repo, u.StallAfter = repo, 5*time.Second
	err := u.Run(t.Context())
	t.Logf("broken root app:\n%s", out.String())
	if !errors.As(err, &nse) || !strings.HasPrefix(nse.Reason, "stalled: nothing changed for ") ||
		!slices.ContainsFunc(nse.Waiting, func(w string) bool { return strings.HasPrefix(w, "broken: ") }) {
		t.Errorf("up with a broken root app: %v, want a stall naming the app", err)
	}
}

// reuseThenInterrupt runs up again without --fresh and without
// --exit-when-settled, cancels it once settled and checks the controller
// no longer acts.
func (e *rehearsalEnv) reuseThenInterrupt(pid int) {
	t := e.t
	out := &testenv.SyncBuffer{}
	u := e.up("", out)
	u.ExitWhenSettled = false
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- u.Run(ctx) }()
	deadline := time.After(time.Minute)
	for !strings.Contains(out.String(), "settled:") {
		select {
		case err := <-errc:
			t.Fatalf("up returned before Ctrl-C: %v\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("reused cluster did not settle:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if p := e.supervisorPID(); p != pid {
		t.Errorf("second up started a new cluster (pid %d, was %d)", p, pid)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("up after Ctrl-C: %v", err)
		}
	case <-time.After(controllerStopTimeout + 5*time.Second):
		t.Fatal("up did not return after Ctrl-C")
	}
	t.Logf("reused cluster, interrupted:\n%s", out.String())
	// With the controller stopped, nothing heals a deleted Deployment.
	c := e.client()
	dep := &appsv1.Deployment{}
	dep.Namespace, dep.Name = "app-b", "app-b"
	if err := c.Delete(t.Context(), dep); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(dep), dep); err == nil {
		t.Error("a controller still runs after Ctrl-C: app-b's Deployment came back")
	}
}

// downLeavesNothing checks Down stops every process of the cluster and
// removes the workspace.
func (e *rehearsalEnv) downLeavesNothing() {
	t := e.t
	if err := (&Down{Workspace: e.ws.Dir, LocalCluster: e.binary}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.ws.Dir); !os.IsNotExist(err) {
		t.Errorf("workspace %s still there after down: %v", e.ws.Dir, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(e.ws.Dir)) {
			t.Errorf("process %s still runs after down: %s", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// checkUI waits for up to print the web UI's address and password, then
// logs in through the API and lists the Applications there.
func checkUI(ctx context.Context, out *testenv.SyncBuffer) <-chan error {
	done := make(chan error, 1)
	line := regexp.MustCompile(`web UI (http://\S+) \(user admin, password (\S+)\)`)
	go func() {
		var m []string
		for m == nil {
			if m = line.FindStringSubmatch(out.String()); m == nil {
				select {
				case <-ctx.Done():
					done <- ctx.Err()
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		done <- loginAndList(ctx, m[1], m[2])
	}()
	return done
}

func loginAndList(ctx context.Context, url, password string) error {
	body := strings.NewReader(`{"username":"admin","password":"` + password + `"}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/session", body)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var session struct{ Token string }
	if err := json.NewDecoder(res.Body).Decode(&session); err != nil || session.Token == "" {
		return fmt.Errorf("login: status %d, %w", res.StatusCode, err)
	}
	// The UI starts before the root manifest is applied.
	for deadline := time.Now().Add(30 * time.Second); ; {
		n, err := countApps(ctx, url, session.Token)
		if err != nil || n > 0 {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("list applications: none after 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countApps(ctx context.Context, url, token string) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/applications", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var list struct {
		Items []struct {
			Metadata struct{ Name string }
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("list applications: status %d, %w", res.StatusCode, err)
	}
	return len(list.Items), nil
}
