package metrics

import (
	"fmt"
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

func TestMetrics(t *testing.T) {
	m := newMetrics(t)
	app := testApp("argocd", "guestbook", "default")
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
	m.ObserveKubeRequest("patch", "applications/status")
	m.SetShardApps("controller-0", 12)
	m.ObserveRebalance("controller-0", 12, 0)
	m.ObserveRebalance("controller-0", 0, 3)

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
# HELP wavecd_kube_requests_total Requests sent to Kubernetes API servers, by verb and resource as apiserver_request_total names them.
# TYPE wavecd_kube_requests_total counter
wavecd_kube_requests_total{resource="applications/status",verb="patch"} 1
# HELP wavecd_shard_apps Applications this controller replica reconciles, when the apps are sharded.
# TYPE wavecd_shard_apps gauge
wavecd_shard_apps{replica="controller-0"} 12
# HELP wavecd_shard_apps_moved_total Applications this controller replica took up (gained) or gave away (lost) in rebalances.
# TYPE wavecd_shard_apps_moved_total counter
wavecd_shard_apps_moved_total{direction="gained",replica="controller-0"} 12
wavecd_shard_apps_moved_total{direction="lost",replica="controller-0"} 3
# HELP wavecd_shard_rebalances_total Changes of the apps this controller replica reconciles (replicas joining or leaving, apps added or removed).
# TYPE wavecd_shard_rebalances_total counter
wavecd_shard_rebalances_total{replica="controller-0"} 2
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
		"wavecd_app_info", "wavecd_app_reconcile_total", "wavecd_app_sync_total", "wavecd_kube_requests_total",
		"wavecd_notifications_deliveries_total", "wavecd_notifications_trigger_eval_total",
		"wavecd_shard_apps", "wavecd_shard_apps_moved_total", "wavecd_shard_rebalances_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.reconcileDuration); n != 1 {
		t.Errorf("reconcile duration series = %d, want 1", n)
	}
	// Another app of the namespace adds to the same histogram.
	m.ObserveReconcile("argocd", "other", ResultSuccess, time.Second)
	m.DeleteApp("argocd", "other")
	if n := testutil.CollectAndCount(m.reconcileDuration); n != 1 {
		t.Errorf("reconcile duration series of two apps = %d, want 1 for their namespace", n)
	}
	if err := testutil.GatherAndCompare(m.registry, strings.NewReader(`
# HELP wavecd_app_reconcile_duration_seconds Time an Application reconcile took, by the apps' namespace and result (like argocd_app_reconcile, not by app).
# TYPE wavecd_app_reconcile_duration_seconds histogram
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="0.25"} 0
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="0.5"} 1
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="1"} 2
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="2"} 2
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="4"} 2
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="8"} 2
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="16"} 2
wavecd_app_reconcile_duration_seconds_bucket{namespace="argocd",result="success",le="+Inf"} 2
wavecd_app_reconcile_duration_seconds_sum{namespace="argocd",result="success"} 1.3
wavecd_app_reconcile_duration_seconds_count{namespace="argocd",result="success"} 2
`), "wavecd_app_reconcile_duration_seconds"); err != nil {
		t.Error(err)
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
	if n := testutil.CollectAndCount(m.apps); n != 0 {
		t.Errorf("after DeleteApp the apps' collector still has %d series", n)
	}
	if n := testutil.CollectAndCount(m.reconcileDuration); n != 1 {
		t.Errorf("after DeleteApp the namespace's reconcile durations have %d series, want 1", n)
	}
}

func TestNewRefusesDuplicates(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg); err == nil {
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

// BenchmarkSetAppInfo records the info of one app among 5,000, as a
// controller does on every reconcile: its cost must not grow with the
// apps (it searched every series).
func BenchmarkSetAppInfo(b *testing.B) {
	m := newMetrics(b)
	apps := make([]*v1alpha1.Application, 5000)
	for i := range apps {
		apps[i] = testApp("argocd", fmt.Sprintf("app-%d", i), "")
		apps[i].Status.Health.Status = "Healthy"
		m.SetAppInfo(apps[i])
	}
	b.ResetTimer()
	for i := range b.N {
		app := apps[i%len(apps)]
		if i%2 == 0 {
			app.Status.Health.Status = "Progressing"
		} else {
			app.Status.Health.Status = "Healthy"
		}
		m.SetAppInfo(app)
	}
}

// TestAppSeries: the per-app series made at each scrape say what the
// client library's vectors said: a series per result and per phase and
// project seen, the info of the app's last state, and nothing of a
// deleted app.
func TestAppSeries(t *testing.T) {
	m := newMetrics(t)
	a, b := testApp("argocd", "a", "default"), testApp("team", "b", "team")
	m.ObserveReconcile("argocd", "a", ResultSuccess, time.Millisecond)
	m.ObserveReconcile("argocd", "a", ResultError, time.Millisecond)
	m.ObserveReconcile("argocd", "a", ResultSuccess, time.Millisecond)
	m.ObserveSync(a, v1alpha1.OperationFailed)
	m.ObserveSync(a, v1alpha1.OperationSucceeded)
	m.ObserveSync(a, v1alpha1.OperationSucceeded)
	a.Spec.Project = "platform"
	m.ObserveSync(a, v1alpha1.OperationSucceeded)
	a.Status.Health.Status, a.Status.Sync.Status = "Degraded", v1alpha1.SyncStatusCodeOutOfSync
	m.SetAppInfo(a)
	m.SetAppInfo(b)
	m.ObserveReconcile("team", "b", ResultSuccess, time.Millisecond)
	m.ObserveReconcile("argocd", "gone", ResultSuccess, time.Millisecond)
	m.DeleteApp("argocd", "gone")

	want := `
# HELP wavecd_app_info Information about an Application (always 1), like argocd_app_info.
# TYPE wavecd_app_info gauge
wavecd_app_info{health_status="Degraded",name="a",namespace="argocd",project="platform",sync_status="OutOfSync"} 1
wavecd_app_info{health_status="",name="b",namespace="team",project="team",sync_status=""} 1
# HELP wavecd_app_reconcile_total Application reconciles, by app and result.
# TYPE wavecd_app_reconcile_total counter
wavecd_app_reconcile_total{name="a",namespace="argocd",result="error"} 1
wavecd_app_reconcile_total{name="a",namespace="argocd",result="success"} 2
wavecd_app_reconcile_total{name="b",namespace="team",result="success"} 1
# HELP wavecd_app_sync_total Finished sync operations, by app and final phase.
# TYPE wavecd_app_sync_total counter
wavecd_app_sync_total{name="a",namespace="argocd",phase="Failed",project="default"} 1
wavecd_app_sync_total{name="a",namespace="argocd",phase="Succeeded",project="default"} 2
wavecd_app_sync_total{name="a",namespace="argocd",phase="Succeeded",project="platform"} 1
`
	if err := testutil.GatherAndCompare(m.registry, strings.NewReader(want),
		"wavecd_app_info", "wavecd_app_reconcile_total", "wavecd_app_sync_total"); err != nil {
		t.Error(err)
	}
}

func newMetrics(tb testing.TB) *Metrics {
	tb.Helper()
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func testApp(namespace, name, project string) *v1alpha1.Application {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	app.Spec.Project = project
	return app
}
