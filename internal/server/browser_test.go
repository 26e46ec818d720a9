package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/testenv"
)

// chromiumPath is Debian's chromium; WAVECD_CHROMIUM overrides it.
func chromiumPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv("WAVECD_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the browser tests need Chromium at %s (install Debian's package: apt-get install -y chromium, or set WAVECD_CHROMIUM): %v", p, err)
	}
	return p
}

// newBrowser starts headless Chromium with a fresh profile; it stops when
// the test ends.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// artifactDir is where screenshots go: sub under $WAVECD_ARTIFACTS or
// _artifacts/ at the repository root (ignored by Git).
func artifactDir(t testing.TB, sub string) string {
	t.Helper()
	dir := os.Getenv("WAVECD_ARTIFACTS")
	if dir == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "_artifacts")
	}
	dir = filepath.Join(dir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browserStep runs actions with a deadline and saves a screenshot named
// after the step, failing the test with the step's name.
type browserSteps struct {
	t   *testing.T
	ctx context.Context
	dir string
	n   int
}

func (b *browserSteps) run(name string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	b.n++
	path := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", b.n, name))
	sctx, scancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer scancel()
	if png, serr := chromedp.Run(sctx, chromedp.FullScreenshot(100)); serr == nil {
		if werr := os.WriteFile(path, png, 0o644); werr == nil {
			b.t.Logf("screenshot: %s", path)
		}
	}
	if err != nil {
		html, _ := chromedp.Run(sctx, chromedp.OuterHTML(chromedp.CSS("body")))
		b.t.Fatalf("browser step %q: %v (screenshot %s)\npage body:\n%s", name, err, path, html)
	}
}

// fillLogin opens the application list, which asks for a login, and
// fills in admin's name and password; the caller signs in.
func (b *browserSteps) fillLogin(h *apiHarness) {
	b.t.Helper()
	b.run("login", 30*time.Second,
		chromedp.Navigate(h.base+"/applications"),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#username"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#password"), h.adminPassword),
	)
}

// text reads the text of the first element matching a CSS selector.
func (b *browserSteps) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read text of %s: %v", sel, err)
	}
	return s
}

// gitRepoFrom commits a copy of dirs (relative to the repository root)
// into a new Git repository and returns its path.
func gitRepoFrom(t testing.TB, dirs map[string]string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for from, to := range dirs {
		if err := os.CopyFS(filepath.Join(repo, to), os.DirFS(filepath.Join(root, from))); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "charts"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.test", "-c", "user.name=t"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return repo
}

// startController runs the Application controller for ns until the test
// ends. It keeps argocd-cm's installation id (none), as the API server's
// diffs read it: only one controller runs in this package's cluster.
func startController(t testing.TB, ns string) {
	t.Helper()
	env := testenv.Get(t)
	ctrl, err := controller.New(env.Config, controller.Options{Namespace: ns, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, "controller", ctrl.Start)
}

// demoApp is an Application of the health-check demo's charts, synced
// manually so a hand edit stays OutOfSync until someone syncs.
func demoApp(ns, name, repo string, syncNow bool) *v1alpha1.Application {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"demo": "healthcheck"}},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			Source: &v1alpha1.ApplicationSource{
				RepoURL: repo, Path: "charts/" + name, TargetRevision: "main",
				Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "readyDelay", Value: "1s"}}},
			},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: ns},
		},
	}
	if syncNow {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	}
	return app
}

// TestBrowserDriftAndSync drives the UI in headless Chromium against the
// real controller: log in, see the apps, open app-a and its StatefulSet,
// scale the StatefulSet by hand, see OutOfSync and the diff, sync, see
// Synced again and the sync among the app's events.
func TestBrowserDriftAndSync(t *testing.T) {
	browser := newBrowser(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	h := newAPIHarness(t, harnessOptions{
		namespace: ns,
		differ:    compare.NewDiffer(env.Config, compare.DifferOptions{CacheDir: t.TempDir()}),
	})
	startController(t, ns)
	repo := gitRepoFrom(t, map[string]string{
		"examples/healthcheck-poc/charts/app-a": "charts/app-a",
		"examples/healthcheck-poc/charts/app-b": "charts/app-b",
	})
	for _, app := range []*v1alpha1.Application{demoApp(ns, "app-a", repo, true), demoApp(ns, "app-b", repo, false)} {
		if err := h.kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	waitApp(t, h, "app-a", 90*time.Second, "Synced and Healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == "Healthy" && a.Operation == nil
	})

	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "browser")}
	b.fillLogin(h)
	b.run("applications", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(`.tile[data-app="app-a"][data-sync="Synced"][data-health="Healthy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.tile[data-app="app-b"]`)),
	)
	b.run("app-a-tree", 30*time.Second,
		chromedp.Click(chromedp.CSS(`.tile[data-app="app-a"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tree .node[data-kind="StatefulSet"][data-name="redis"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tree .node[data-kind="StatefulSet"] .node[data-kind="Pod"][data-name="redis-0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#app-sync .s-Synced`)),
	)

	scaleStatefulSet(t, h, ns, "redis", 2)
	b.run("out-of-sync", 30*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`#app-sync .s-OutOfSync`)),
		chromedp.WaitVisible(chromedp.CSS(`#tree .node[data-kind="StatefulSet"] .s-OutOfSync`)),
	)
	b.run("diff-unified", 60*time.Second,
		chromedp.Click(chromedp.CSS("#diff-button")),
		chromedp.WaitVisible(chromedp.CSS(`#diff-body .diff-item pre.unified .del`)),
	)
	unified := b.text("#diff-body")
	if !strings.Contains(unified, "-  replicas: 2") || !strings.Contains(unified, "+  replicas: 1") {
		t.Errorf("the unified diff does not show replicas 2 -> 1:\n%s", unified)
	}
	b.run("diff-side-by-side", 60*time.Second,
		chromedp.Click(chromedp.CSS("#diff-split")),
		chromedp.WaitVisible(chromedp.CSS(`#diff-body table.split tr.change`)),
	)
	split := b.text("#diff-body table.split tr.change")
	if !strings.Contains(split, "replicas: 2") || !strings.Contains(split, "replicas: 1") {
		t.Errorf("the side-by-side diff row %q does not pair replicas 2 and 1", split)
	}
	b.run("sync-dialog", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sync-button")),
		chromedp.WaitVisible(chromedp.CSS("#sync-dialog[open] #sync-submit")),
	)
	b.run("synced", 90*time.Second,
		chromedp.Click(chromedp.CSS("#sync-submit")),
		chromedp.WaitNotPresent(chromedp.CSS("#sync-dialog[open]")),
		chromedp.WaitVisible(chromedp.CSS(`#operation.op-Succeeded`)),
		chromedp.WaitVisible(chromedp.CSS(`#app-sync .s-Synced`)),
		chromedp.WaitVisible(chromedp.CSS(`#timeline`)),
	)
	// The controller's events show on the page: who started the sync.
	b.run("events", 30*time.Second,
		chromedp.Poll[chromedp.Void](`(document.querySelector("#events") || {innerText: ""}).innerText.includes("admin initiated sync to")`),
	)
	var sts appsv1.StatefulSet
	if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "redis"}, &sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 1 {
		t.Errorf("after the sync the StatefulSet has %d replicas, want 1", *sts.Spec.Replicas)
	}
	if op := h.app("app-a").Status.OperationState; op == nil || op.Operation.InitiatedBy.Username != "admin" {
		t.Errorf("the last operation was not started by admin from the UI: %+v", op)
	}
}

func scaleStatefulSet(t *testing.T, h *apiHarness, ns, name string, replicas int32) {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &sts); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Replicas = &replicas
	if err := h.kube.Patch(t.Context(), &sts, patch); err != nil {
		t.Fatal(err)
	}
}

func waitApp(t *testing.T, h *apiHarness, name string, timeout time.Duration, what string, cond func(*v1alpha1.Application) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		app := &v1alpha1.Application{}
		err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: h.ns, Name: name}, app)
		if err == nil && cond(app) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("app %s not %s within %s: sync %s, health %s, operation state %+v",
				name, what, timeout, app.Status.Sync.Status, app.Status.Health.Status, app.Status.OperationState)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBrowserAppsInAnyNamespace: an app outside the control namespace
// (application.namespaces) shows in the list as NAMESPACE/NAME, opens on
// its own page, and syncs from it.
func TestBrowserAppsInAnyNamespace(t *testing.T) {
	browser := newBrowser(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	teamA := ns + "-team-a"
	patterns := []string{ns + "-team-*"}
	h := newAPIHarness(t, harnessOptions{namespace: ns, appNamespaces: patterns,
		differ: compare.NewDiffer(env.Config, compare.DifferOptions{CacheDir: t.TempDir(), Namespace: ns})})
	h.namespace(teamA)
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceNamespaces: []string{teamA},
	}}
	if err := h.kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	ctrl, err := controller.New(env.Config, controller.Options{Namespace: ns, ApplicationNamespaces: patterns, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, "controller", ctrl.Start)
	repo := gitRepoFrom(t, map[string]string{"examples/healthcheck-poc/charts/app-b": "charts/app-b"})
	app := demoApp(teamA, "app-b", repo, false)
	app.Spec.Project = "team"
	if err := h.kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "browser-appns")}
	b.fillLogin(h)
	tile := `.tile[data-app="` + teamA + `/app-b"]`
	b.run("applications", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(tile+`[data-sync="OutOfSync"]`)),
	)
	b.run("app-page", 30*time.Second,
		chromedp.Click(chromedp.CSS(tile)),
		chromedp.WaitVisible(chromedp.CSS(`#app-sync .s-OutOfSync`)),
	)
	if got := b.text(".crumbs strong"); got != teamA+"/app-b" {
		t.Errorf("the page names the app %q, want %q", got, teamA+"/app-b")
	}
	b.run("refresh", 30*time.Second,
		chromedp.Click(chromedp.CSS("#refresh-button")),
		chromedp.Poll[chromedp.Void](`document.getElementById("toast").textContent === "Refreshed"`),
	)
	b.run("synced", 90*time.Second,
		chromedp.Click(chromedp.CSS("#sync-button")),
		chromedp.WaitVisible(chromedp.CSS("#sync-dialog[open] #sync-submit")),
		chromedp.Click(chromedp.CSS("#sync-submit")),
		chromedp.WaitNotPresent(chromedp.CSS("#sync-dialog[open]")),
		chromedp.WaitVisible(chromedp.CSS(`#operation.op-Succeeded`)),
		chromedp.WaitVisible(chromedp.CSS(`#app-sync .s-Synced`)),
	)
	got := &v1alpha1.Application{}
	if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: teamA, Name: "app-b"}, got); err != nil {
		t.Fatal(err)
	}
	if op := got.Status.OperationState; op == nil || op.Operation.InitiatedBy.Username != "admin" {
		t.Errorf("the app's last operation was not started by admin from the UI: %+v", op)
	}
}
