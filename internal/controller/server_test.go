package controller

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wmetrics "github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/server"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv"
)

const pushEvent = `{"ref": "refs/heads/main", "repository": {"html_url": "https://github.com/acme/guestbook", "default_branch": "main"}}`

// TestServer serves the controller's webhook, metrics and probes: a push
// refreshes the app through the controller (the periodic refresh is
// minutes away), and the metrics show the reconciles, syncs, app state and
// Git fetches.
func TestServer(t *testing.T) {
	t.Parallel()
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/cm.yaml": guestbookConfigMap})
	metrics, err := wmetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	mirrors := source.Mirrors{}
	mirrors.Add("https://github.com/acme/guestbook.git", repo.Dir)
	h := startController(t, Options{Metrics: metrics, Mirrors: mirrors})
	base := serve(t, h, metrics)
	h.create(testApp{name: "guestbook", repoURL: "https://github.com/acme/guestbook.git", automated: true})
	h.waitApp("guestbook", 30*time.Second, "Synced and Healthy", syncedHealthy)
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ok"} {
		if code, body := get(t, base+path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d %q, want 200 %q", path, code, body, want)
		}
	}

	repo.Commit(map[string]string{"guestbook/cm.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "green")
	req, err := http.NewRequest(http.MethodPost, base+"/api/webhook", strings.NewReader(pushEvent))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-GitHub-Event", "push")
	code, body := do(t, req)
	if code != http.StatusOK || !strings.Contains(body, "refreshed 1 application(s)") {
		t.Fatalf("push = %d %q, want 200 and one app refreshed", code, body)
	}
	testenv.Eventually(t, 30*time.Second, "the pushed color applied", func() bool {
		cm := &corev1.ConfigMap{}
		return h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, cm) == nil && cm.Data["color"] == "green"
	})
	h.waitApp("guestbook", 30*time.Second, "Synced and Healthy again", syncedHealthy)

	labels := `name="guestbook",namespace="` + h.ns + `"`
	wants := []string{
		`wavecd_app_reconcile_total{` + labels + `,result="success"}`,
		`wavecd_app_reconcile_duration_seconds_count{namespace="` + h.ns + `",result="success"}`,
		`wavecd_app_sync_total{` + labels + `,phase="Succeeded",project="default"} 2`,
		`wavecd_app_info{health_status="Healthy",` + labels + `,project="default",sync_status="Synced"} 1`,
		`wavecd_git_fetch_duration_seconds_count{repo="https://github.com/acme/guestbook.git",result="success"}`,
	}
	// The gauges follow the reconcile that wrote the status just read.
	var missing []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, text := get(t, base+"/metrics")
		missing = slices.DeleteFunc(slices.Clone(wants), func(w string) bool { return strings.Contains(text, w) })
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range missing {
		t.Errorf("/metrics lacks %s", m)
	}
}

// serve runs the controller's HTTP server on a free local port until the
// test ends and returns its base URL.
func serve(t *testing.T, h *harness, metrics *wmetrics.Metrics) string {
	t.Helper()
	webhook := server.NewWebhook(server.WebhookOptions{
		Apps: h.ctrl.Lister(), Refresher: h.ctrl.Refresher(),
		Secrets: server.SettingsSecret{Reader: h.ctrl.APIReader(), Namespace: h.ns},
	})
	srv := server.New(server.Options{Webhook: webhook, Metrics: metrics, Ready: h.ctrl.Ready})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
