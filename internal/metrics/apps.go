package metrics

import (
	"slices"
	"sync"
	"unique"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// appSeries makes the series of each app (wavecd_app_info,
// wavecd_app_reconcile_total and wavecd_app_sync_total) at each scrape
// from a few words per app, as Argo CD makes argocd_app_info from its
// informer at each scrape. The Prometheus library's vectors held about
// fifty allocations per app (a label pair is three), all kept for the
// app's lifetime and scattered over the heap of the bootstrap that made
// them.
type appSeries struct {
	info, reconciles, syncs *prometheus.Desc

	mu   sync.Mutex
	apps map[appKey]*appState
}

// appKey names an app.
type appKey struct{ namespace, name string }

// appState is what one app's series say.
type appState struct {
	// project, health and sync are the wavecd_app_info labels; hasInfo
	// says they were set.
	project, health, sync string
	hasInfo               bool
	// reconciles counts reconciles by result (resultIndex).
	reconciles [2]uint64
	syncs      []syncCount
}

// syncCount counts the syncs of an app that ended in phase while it was
// in project.
type syncCount struct {
	project, phase string
	n              uint64
}

func newAppSeries() *appSeries {
	return &appSeries{
		info: prometheus.NewDesc("wavecd_app_info",
			"Information about an Application (always 1), like argocd_app_info.",
			[]string{"namespace", "name", "project", "health_status", "sync_status"}, nil),
		reconciles: prometheus.NewDesc("wavecd_app_reconcile_total",
			"Application reconciles, by app and result.",
			[]string{"namespace", "name", "result"}, nil),
		syncs: prometheus.NewDesc("wavecd_app_sync_total",
			"Finished sync operations, by app and final phase.",
			[]string{"namespace", "name", "project", "phase"}, nil),
		apps: map[appKey]*appState{},
	}
}

// results are the reconcile results, in the order appState counts them.
var results = [...]ReconcileResult{ResultSuccess, ResultError}

// resultIndex is r's place in results; a result not listed counts as a
// success, as ResultOf makes only the two.
func resultIndex(r ReconcileResult) int {
	return max(slices.Index(results[:], r), 0)
}

// label is s as a canonical copy: the few project, status and namespace
// values of thousands of apps are held once, and not by strings of
// objects the cache has dropped.
func label(s string) string { return unique.Make(s).Value() }

// state returns the app's state, made on first use; s.mu is held.
func (s *appSeries) state(namespace, name string) *appState {
	key := appKey{namespace: namespace, name: name}
	st := s.apps[key]
	if st == nil {
		st = &appState{}
		s.apps[appKey{namespace: label(namespace), name: name}] = st
	}
	return st
}

func (s *appSeries) observeReconcile(namespace, name string, result ReconcileResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state(namespace, name).reconciles[resultIndex(result)]++
}

func (s *appSeries) observeSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(app.Namespace, app.Name)
	for i := range st.syncs {
		if c := &st.syncs[i]; c.project == app.Spec.Project && c.phase == string(phase) {
			c.n++
			return
		}
	}
	st.syncs = append(st.syncs, syncCount{project: label(app.Spec.Project), phase: label(string(phase)), n: 1})
}

func (s *appSeries) setInfo(app *v1alpha1.Application) {
	project, health, sync := app.Spec.Project, string(app.Status.Health.Status), string(app.Status.Sync.Status)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(app.Namespace, app.Name)
	if st.hasInfo && st.project == project && st.health == health && st.sync == sync {
		return
	}
	st.project, st.health, st.sync, st.hasInfo = label(project), label(health), label(sync), true
}

func (s *appSeries) delete(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.apps, appKey{namespace: namespace, name: name})
}

// Describe is part of prometheus.Collector.
func (s *appSeries) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.info
	ch <- s.reconciles
	ch <- s.syncs
}

// Collect is part of prometheus.Collector. The states are copied under
// the lock and turned into series after it, so that a scrape does not
// hold up reconciles.
func (s *appSeries) Collect(ch chan<- prometheus.Metric) {
	type entry struct {
		key appKey
		st  appState
	}
	s.mu.Lock()
	entries := make([]entry, 0, len(s.apps))
	for k, st := range s.apps {
		e := entry{key: k, st: *st}
		e.st.syncs = slices.Clone(st.syncs)
		entries = append(entries, e)
	}
	s.mu.Unlock()
	for _, e := range entries {
		ns, name, st := e.key.namespace, e.key.name, &e.st
		if st.hasInfo {
			ch <- prometheus.MustNewConstMetric(s.info, prometheus.GaugeValue, 1, ns, name, st.project, st.health, st.sync)
		}
		for i, n := range st.reconciles {
			if n > 0 {
				ch <- prometheus.MustNewConstMetric(s.reconciles, prometheus.CounterValue, float64(n), ns, name, string(results[i]))
			}
		}
		for _, c := range st.syncs {
			ch <- prometheus.MustNewConstMetric(s.syncs, prometheus.CounterValue, float64(c.n), ns, name, c.project, c.phase)
		}
	}
}
