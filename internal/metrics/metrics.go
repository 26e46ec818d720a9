package metrics

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Registry is where metrics are registered and gathered from, such as
// prometheus.NewRegistry() or controller-runtime's metrics.Registry.
type Registry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// ReconcileResult labels a reconcile: ResultSuccess or ResultError.
type ReconcileResult string

// Reconcile results.
const (
	ResultSuccess ReconcileResult = "success"
	ResultError   ReconcileResult = "error"
)

// ResultOf is the result of a reconcile that returned err.
func ResultOf(err error) ReconcileResult {
	if err != nil {
		return ResultError
	}
	return ResultSuccess
}

// Metrics holds the wavecd_* series the controllers update. All methods are
// safe for concurrent use, and do nothing on a nil *Metrics: a component
// built without metrics records none.
type Metrics struct {
	registry          Registry
	apps              *appSeries
	reconcileDuration *prometheus.HistogramVec
	gitFetchDuration  *prometheus.HistogramVec
	notifyDeliveries  *prometheus.CounterVec
	notifyTriggers    *prometheus.CounterVec
	kubeRequests      *prometheus.CounterVec
	shardApps         *prometheus.GaugeVec
	shardRebalances   *prometheus.CounterVec
	shardMoved        *prometheus.CounterVec
}

// New registers wavecd's metrics with reg; a nil reg gets a new
// registry with the Go and process collectors.
func New(reg Registry) (*Metrics, error) {
	if reg == nil {
		r := prometheus.NewRegistry()
		r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg = r
	}
	m := &Metrics{
		registry: reg,
		apps:     newAppSeries(),
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wavecd_app_reconcile_duration_seconds",
			Help:    "Time an Application reconcile took, by the apps' namespace and result (like argocd_app_reconcile, not by app).",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 16},
		}, []string{"namespace", "result"}),
		gitFetchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wavecd_git_fetch_duration_seconds",
			Help:    "Time a Git fetch took, by repository and result.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32},
		}, []string{"repo", "result"}),
		notifyDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wavecd_notifications_deliveries_total",
			Help: "Notifications delivered (succeeded=true) or given up on after their retries, by trigger and service, like argocd_notifications_deliveries_total.",
		}, []string{"trigger", "service", "succeeded"}),
		notifyTriggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wavecd_notifications_trigger_eval_total",
			Help: "Trigger conditions evaluated, by trigger and result, like argocd_notifications_trigger_eval_total.",
		}, []string{"name", "triggered"}),
		kubeRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wavecd_kube_requests_total",
			Help: "Requests sent to Kubernetes API servers, by verb and resource as apiserver_request_total names them.",
		}, []string{"verb", "resource"}),
		shardApps: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "wavecd_shard_apps",
			Help: "Applications this controller replica reconciles, when the apps are sharded.",
		}, []string{"replica"}),
		shardRebalances: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wavecd_shard_rebalances_total",
			Help: "Changes of the apps this controller replica reconciles (replicas joining or leaving, apps added or removed).",
		}, []string{"replica"}),
		shardMoved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wavecd_shard_apps_moved_total",
			Help: "Applications this controller replica took up (gained) or gave away (lost) in rebalances.",
		}, []string{"replica", "direction"}),
	}
	for _, c := range []prometheus.Collector{m.apps, m.reconcileDuration, m.gitFetchDuration, m.notifyDeliveries, m.notifyTriggers, m.kubeRequests, m.shardApps, m.shardRebalances, m.shardMoved} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return m, nil
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// ObserveReconcile counts one reconcile of an app, and adds its duration
// to the histogram of the app's namespace: a histogram per app held more
// than all of an idle app's other series (a twentieth of the heap of an
// idle controller of thousands of apps).
func (m *Metrics) ObserveReconcile(namespace, name string, result ReconcileResult, took time.Duration) {
	if m == nil {
		return
	}
	m.apps.observeReconcile(namespace, name, result)
	m.reconcileDuration.WithLabelValues(namespace, string(result)).Observe(took.Seconds())
}

// ObserveSync counts a sync operation that ended in phase.
func (m *Metrics) ObserveSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase) {
	if m == nil {
		return
	}
	m.apps.observeSync(app, phase)
}

// SetAppInfo records the app's project, health and sync status, replacing
// the app's previous wavecd_app_info series.
func (m *Metrics) SetAppInfo(app *v1alpha1.Application) {
	if m == nil {
		return
	}
	m.apps.setInfo(app)
}

// DeleteApp drops every series of a deleted app (the reconcile durations
// are its namespace's).
func (m *Metrics) DeleteApp(namespace, name string) {
	if m == nil {
		return
	}
	m.apps.delete(namespace, name)
}

// ObserveKubeRequest counts one request to a Kubernetes API server (a
// kube.RequestCounter).
func (m *Metrics) ObserveKubeRequest(verb, resource string) {
	if m == nil {
		return
	}
	m.kubeRequests.WithLabelValues(verb, resource).Inc()
}

// SetShardApps records how many apps replica reconciles.
func (m *Metrics) SetShardApps(replica string, apps int) {
	if m == nil {
		return
	}
	m.shardApps.WithLabelValues(replica).Set(float64(apps))
}

// ObserveRebalance records a change of the apps replica reconciles: it
// gained and lost that many.
func (m *Metrics) ObserveRebalance(replica string, gained, lost int) {
	if m == nil || gained+lost == 0 {
		return
	}
	m.shardRebalances.WithLabelValues(replica).Inc()
	m.shardMoved.WithLabelValues(replica, "gained").Add(float64(gained))
	m.shardMoved.WithLabelValues(replica, "lost").Add(float64(lost))
}

// ObserveGitFetch records how long fetching repo took; err is the fetch's
// result. Credentials in the URL never reach the label.
func (m *Metrics) ObserveGitFetch(repo string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.gitFetchDuration.WithLabelValues(redactURL(repo), string(ResultOf(err))).Observe(took.Seconds())
}

// ObserveNotificationDelivery counts a notification delivered, or given
// up on after its retries.
func (m *Metrics) ObserveNotificationDelivery(trigger, service string, succeeded bool) {
	if m == nil {
		return
	}
	m.notifyDeliveries.WithLabelValues(trigger, service, strconv.FormatBool(succeeded)).Inc()
}

// ObserveNotificationTrigger counts one evaluation of a trigger condition.
func (m *Metrics) ObserveNotificationTrigger(trigger string, triggered bool) {
	if m == nil {
		return
	}
	m.notifyTriggers.WithLabelValues(trigger, strconv.FormatBool(triggered)).Inc()
}

// redactURL drops the user information of a URL or of an scp-like
// `user@host:path`.
func redactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			return raw[at+1:]
		}
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "invalid-url"
	}
	u.User = nil
	return u.String()
}
