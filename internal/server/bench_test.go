package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// benchApps is how many apps the benchmarks load: a root and the apps
// it bootstrapped.
const benchApps = 200

// createBenchApps creates a root app of apps and n-1 child apps in waves 0
// to 6, each with the status of a finished sync of two objects; health and
// sync spread over their values, one in ten depends on an app of the wave
// before.
func createBenchApps(b *testing.B, h *apiHarness, n int) {
	b.Helper()
	health := []string{"Healthy", "Healthy", "Healthy", "Healthy", "Progressing", "Degraded", "Missing"}
	sync := []v1alpha1.SyncStatusCode{"Synced", "Synced", "Synced", "OutOfSync"}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	root := benchApp(h.ns, "root", start)
	root.Status.Health.Status, root.Status.Sync.Status = "Healthy", "Synced"
	for i := range n - 1 {
		name, wave := fmt.Sprintf("app-%03d", i), i%7
		root.Status.Resources = append(root.Status.Resources, v1alpha1.ResourceStatus{
			Group: v1alpha1.Group, Version: "v1alpha1", Kind: v1alpha1.ApplicationKind, Namespace: h.ns, Name: name,
			Status: "Synced", Health: &v1alpha1.HealthStatus{Status: "Healthy"}, SyncWave: int64(wave),
		})
		at := start.Add(time.Duration(wave) * 5 * time.Second)
		app := benchApp(h.ns, name, at)
		app.Annotations = map[string]string{"argocd.argoproj.io/sync-wave": fmt.Sprint(wave)}
		if i%10 == 9 && wave > 0 {
			app.Annotations["wavecd.io/depends-on"] = fmt.Sprintf("app-%03d", i-1)
		}
		app.Status.Health.Status = v1alpha1.HealthStatusCode(health[i%len(health)])
		app.Status.Sync.Status = sync[i%len(sync)]
		if err := h.kube.Create(b.Context(), app); err != nil {
			b.Fatal(err)
		}
	}
	if err := h.kube.Create(b.Context(), root); err != nil {
		b.Fatal(err)
	}
}

// benchApp is an app whose sync of a Deployment and a Service started at
// at and took 2s, Healthy 2s later.
func benchApp(ns, name string, at time.Time) *v1alpha1.Application {
	t := func(d time.Duration) *metav1.Time { m := metav1.NewTime(at.Add(d)); return &m }
	mt := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(at.Add(d)); return &m }
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": fmt.Sprint(len(name) % 4)}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/apps.git", Path: "apps/" + name, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
		},
		Status: v1alpha1.ApplicationStatus{
			Health: v1alpha1.AppHealthStatus{LastTransitionTime: t(4 * time.Second)},
			Sync:   v1alpha1.SyncStatus{Revision: "1111111111111111111111111111111111111111"},
			Resources: []v1alpha1.ResourceStatus{
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: name, Name: "web", Status: "Synced", Health: &v1alpha1.HealthStatus{Status: "Healthy"}},
				{Version: "v1", Kind: "Service", Namespace: name, Name: "web", Status: "Synced", SyncWave: 1},
			},
			OperationState: &v1alpha1.OperationState{
				Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
				Phase:     v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", StartedAt: *t(0), FinishedAt: t(2 * time.Second),
				SyncResult: &v1alpha1.SyncOperationResult{Revision: "1111111111111111111111111111111111111111", Resources: v1alpha1.ResourceResults{
					{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: name, Name: "web", Status: "Synced", SyncPhase: "Sync", StartedAt: mt(100 * time.Millisecond), FinishedAt: mt(1500 * time.Millisecond)},
					{Version: "v1", Kind: "Service", Namespace: name, Name: "web", Status: "Synced", SyncPhase: "Sync", StartedAt: mt(1600 * time.Millisecond), FinishedAt: mt(2 * time.Second)},
				}},
			},
		},
	}
}

// BenchmarkAppListPage loads the application list with 200 apps: the
// server's render (an HTTP GET of the page, with the session, RBAC and the
// list read from the API server), and a headless Chromium loading the
// page until every tile is drawn.
func BenchmarkAppListPage(b *testing.B) {
	benchPage(b, "/applications", fmt.Sprintf(`.tile[data-app="app-%03d"]`, benchApps-2))
}

// BenchmarkRootPage loads the page of the root of 199 apps: the list of
// apps, the app-of-apps graph (quiet apps folded), the sync timeline
// (folded), the resource tree and the events; server render and browser
// load as BenchmarkAppListPage.
func BenchmarkRootPage(b *testing.B) {
	benchPage(b, "/applications/root", "#app-graph svg .node.group")
}

// benchPage measures the server's render of path and a browser's load of
// it until sel is visible.
func benchPage(b *testing.B, path, sel string) {
	h := newAPIHarness(b, harnessOptions{})
	createBenchApps(b, h, benchApps)
	token := h.admin()

	b.Run("server-render", func(b *testing.B) {
		c := h.httpClient()
		for b.Loop() {
			req, err := http.NewRequestWithContext(b.Context(), "GET", h.base+path, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.AddCookie(&http.Cookie{Name: "argocd.token", Value: token})
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := drain(resp)
			if resp.StatusCode != http.StatusOK || n < 10000 {
				b.Fatalf("page: %d, %d bytes", resp.StatusCode, n)
			}
		}
	})

	b.Run("browser-load", func(b *testing.B) {
		browser := newBrowser(b)
		login(b, browser, h)
		for b.Loop() {
			ctx, cancel := context.WithTimeout(browser, 30*time.Second)
			err := chromedp.Do(ctx, chromedp.Navigate(h.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func drain(resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	var n int64
	buf := make([]byte, 32<<10)
	for {
		m, err := resp.Body.Read(buf)
		n += int64(m)
		if err != nil {
			return n, nil
		}
	}
}

// login signs the browser in as admin.
func login(b testing.TB, browser context.Context, h *apiHarness) {
	b.Helper()
	ctx, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(h.base+"/login"),
		chromedp.SendKeys(chromedp.CSS("#username"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#password"), h.adminPassword),
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(".tiles")),
	)
	if err != nil {
		b.Fatalf("log in: %v", err)
	}
}
