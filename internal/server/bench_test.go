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

// benchApps is the size of the list the benchmarks load.
const benchApps = 100

// createBenchApps creates n apps with statuses spread over the health and
// sync values.
func createBenchApps(b *testing.B, h *apiHarness, n int) {
	b.Helper()
	health := []string{"Healthy", "Healthy", "Progressing", "Degraded", "Missing"}
	sync := []v1alpha1.SyncStatusCode{"Synced", "Synced", "OutOfSync"}
	for i := range n {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: fmt.Sprintf("app-%03d", i), Labels: map[string]string{"team": fmt.Sprint(i % 4)}},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example/apps.git", Path: fmt.Sprintf("apps/%03d", i), TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: h.ns},
			},
			Status: v1alpha1.ApplicationStatus{
				Health: v1alpha1.AppHealthStatus{Status: v1alpha1.HealthStatusCode(health[i%len(health)])},
				Sync:   v1alpha1.SyncStatus{Status: sync[i%len(sync)], Revision: "1111111111111111111111111111111111111111"},
			},
		}
		if err := h.kube.Create(b.Context(), app); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppListPage loads the application list with 100 apps: the
// server's render (an HTTP GET of the page, with the session, RBAC and the
// list read from the API server), and a headless Chromium loading the
// page until every tile is drawn.
func BenchmarkAppListPage(b *testing.B) {
	h := newAPIHarness(b, harnessOptions{})
	createBenchApps(b, h, benchApps)
	token := h.admin()

	b.Run("server-render", func(b *testing.B) {
		c := h.httpClient()
		for b.Loop() {
			req, err := http.NewRequestWithContext(b.Context(), "GET", h.base+"/applications", nil)
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
		last := fmt.Sprintf(`.tile[data-app="app-%03d"]`, benchApps-1)
		for b.Loop() {
			ctx, cancel := context.WithTimeout(browser, 30*time.Second)
			err := chromedp.Do(ctx, chromedp.Navigate(h.base+"/applications"), chromedp.WaitVisible(chromedp.CSS(last)))
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
