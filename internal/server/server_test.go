package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// runningServer is a Server serving on a free 127.0.0.1 port.
type runningServer struct {
	base   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Serve's result, set when done is closed
}

// startServer serves s until the test ends.
func startServer(t *testing.T, s *Server) *runningServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rs := &runningServer{base: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		rs.err = s.Serve(ctx, ln)
		close(rs.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-rs.done
	})
	return rs
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	ready := errors.New("informers not synced")
	s := New(Options{
		Webhook: NewWebhook(WebhookOptions{Apps: staticApps{}, Refresher: &recordingRefresher{}}),
		Metrics: metrics,
		Ready:   func(context.Context) error { return ready },
	})
	base := startServer(t, s).base
	tests := map[string]struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		"healthz":             {"/healthz", 200, "ok"},
		"readyz not ready":    {"/readyz", 503, "not ready: informers not synced"},
		"metrics":             {"/metrics", 200, "go_goroutines"},
		"webhook is POST":     {"/api/webhook", 405, "POST only"},
		"unknown path is 404": {"/nope", 404, "not found"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, body := get(t, base+tc.path)
			if code != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tc.path, code, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	ready = nil
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Errorf("readyz after ready = %d %q, want 200", code, body)
	}
}

func TestServerShutsDownGracefully(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	s := New(Options{Webhook: slow, ShutdownTimeout: 10 * time.Second})
	rs := startServer(t, s)
	result := make(chan string, 1)
	go func() {
		resp, err := http.Post(rs.base+"/api/webhook", "application/json", strings.NewReader("{}"))
		if err != nil {
			result <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		result <- string(b)
	}()
	<-started
	rs.cancel()
	select {
	case <-rs.done:
		t.Fatalf("Serve returned %v before the request in flight finished", rs.err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if got := <-result; got != "finished" {
		t.Errorf("request in flight got %q, want finished", got)
	}
	<-rs.done
	if rs.err != nil {
		t.Errorf("Serve = %v, want nil after a graceful shutdown", rs.err)
	}
}

func TestStartReportsListenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = New(Options{Addr: ln.Addr().String()}).Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("Start on a busy port = %v, want a listen error naming the address", err)
	}
}

func TestMetrics(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"}}
	app.Spec.Project = "default"
	app.Status.Health.Status, app.Status.Sync.Status = "Progressing", v1alpha1.SyncStatusCodeOutOfSync
	m.SetAppInfo(app)
	app.Status.Health.Status, app.Status.Sync.Status = "Healthy", v1alpha1.SyncStatusCodeSynced
	m.SetAppInfo(app)
	m.ObserveReconcile("argocd", "guestbook", ResultSuccess, 300*time.Millisecond)
	m.ObserveSync(app, v1alpha1.OperationSucceeded)
	m.ObserveGitFetch("https://bot:s3cr3t@github.com/acme/seed.git", 2*time.Second, nil)
	m.ObserveNotificationDelivery("on-deployed", "slack", true)
	m.ObserveNotificationDelivery("on-sync-failed", "pager", false)
	m.ObserveNotificationTrigger("on-deployed", false)
	m.ObserveNotificationTrigger("on-deployed", true)
	m.ObserveNotificationTrigger("on-deployed", true)

	want := `
# HELP wavecd_app_info Information about an Application (always 1), like argocd_app_info.
# TYPE wavecd_app_info gauge
wavecd_app_info{health_status="Healthy",name="guestbook",namespace="argocd",project="default",sync_status="Synced"} 1
# HELP wavecd_app_reconcile_total Application reconciles, by app and result.
# TYPE wavecd_app_reconcile_total counter
wavecd_app_reconcile_total{name="guestbook",namespace="argocd",result="success"} 1
# HELP wavecd_app_sync_total Finished sync operations, by app and final phase.
# TYPE wavecd_app_sync_total counter
wavecd_app_sync_total{name="guestbook",namespace="argocd",phase="Succeeded",project="default"} 1
# HELP wavecd_notifications_deliveries_total Notifications delivered (succeeded=true) or given up on after their retries, by trigger and service, like argocd_notifications_deliveries_total.
# TYPE wavecd_notifications_deliveries_total counter
wavecd_notifications_deliveries_total{service="pager",succeeded="false",trigger="on-sync-failed"} 1
wavecd_notifications_deliveries_total{service="slack",succeeded="true",trigger="on-deployed"} 1
# HELP wavecd_notifications_trigger_eval_total Trigger conditions evaluated, by trigger and result, like argocd_notifications_trigger_eval_total.
# TYPE wavecd_notifications_trigger_eval_total counter
wavecd_notifications_trigger_eval_total{name="on-deployed",triggered="false"} 1
wavecd_notifications_trigger_eval_total{name="on-deployed",triggered="true"} 2
`
	if err := testutil.GatherAndCompare(m.registry, strings.NewReader(want),
		"wavecd_app_info", "wavecd_app_reconcile_total", "wavecd_app_sync_total",
		"wavecd_notifications_deliveries_total", "wavecd_notifications_trigger_eval_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.reconcileDuration); n != 1 {
		t.Errorf("reconcile duration series = %d, want 1", n)
	}

	rec := httptestGet(t, m.Handler())
	for _, name := range []string{"wavecd_app_info", "wavecd_app_reconcile_total", "wavecd_app_reconcile_duration_seconds_bucket",
		"wavecd_app_sync_total", "wavecd_git_fetch_duration_seconds_bucket"} {
		if !strings.Contains(rec, name) {
			t.Errorf("exposition lacks %s", name)
		}
	}
	if strings.Contains(rec, "s3cr3t") || !strings.Contains(rec, `repo="https://github.com/acme/seed.git"`) {
		t.Errorf("git fetch label is not the redacted URL:\n%s", rec)
	}

	m.DeleteApp("argocd", "guestbook")
	for _, c := range []prometheus.Collector{m.appInfo, m.reconcileTotal, m.reconcileDuration, m.syncTotal} {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("after DeleteApp a collector still has %d series", n)
		}
	}
}

func TestNewMetricsRefusesDuplicates(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("registering the metrics twice in one registry succeeded")
	}
}

func httptestGet(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	return rec.Body.String()
}
