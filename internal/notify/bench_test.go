package notify

import (
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// BenchmarkEvaluate measures one look at an app subscribed to every
// trigger of the catalog through the `subscriptions` key, as the
// controller does on each change and resync of each app.
func BenchmarkEvaluate(b *testing.B) {
	data, err := WithCatalog(map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1/",
		"subscriptions": `- recipients: [hook]
  triggers: [on-created, on-deleted, on-deployed, on-health-degraded, on-sync-failed, on-sync-running,
    on-sync-status-unknown, on-sync-succeeded, on-stalled, on-dependency-wait, on-bootstrap-complete]`,
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg := ParseConfig(data, nil)
	app := loadApp(b, "bootstrap/complete.yaml")
	apps := loadApps(b, "bootstrap/complete.yaml")
	env := Env{Now: func() time.Time { return testNow }, Apps: func() []*v1alpha1.Application { return apps }}
	st := State{}
	b.ReportAllocs()
	for b.Loop() {
		cfg.Evaluate(app, nil, env, st, nil)
	}
}

// BenchmarkChildNames measures finding the children of an app, done for
// every app on every change of any app.
func BenchmarkChildNames(b *testing.B) {
	app := loadApps(b, "bootstrap/complete.yaml")[0]
	b.ReportAllocs()
	for b.Loop() {
		childNames(app)
	}
}
