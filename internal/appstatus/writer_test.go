package appstatus

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestOnlyTimestamps(t *testing.T) {
	at := func(s int) *metav1.Time { m := metav1.NewTime(time.Unix(int64(s), 0)); return &m }
	base := &v1alpha1.Application{}
	base.Status.ReconciledAt, base.Status.ObservedAt = at(1), at(1)
	base.Status.Health.Status = v1alpha1.HealthStatusCode("Healthy")
	base.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "failed", LastTransitionTime: at(1)}}
	tests := map[string]struct {
		change func(*v1alpha1.Application)
		want   bool
	}{
		"a newer comparison time only": {change: func(a *v1alpha1.Application) {
			a.Status.ReconciledAt, a.Status.ObservedAt = at(2), at(2)
		}, want: true},
		"a health change": {change: func(a *v1alpha1.Application) {
			a.Status.ReconciledAt = at(2)
			a.Status.Health.Status = v1alpha1.HealthStatusCode("Degraded")
		}},
		"the same condition time in another zone": {change: func(a *v1alpha1.Application) {
			a.Status.ReconciledAt = at(2)
			a.Status.Conditions[0].LastTransitionTime = &metav1.Time{Time: a.Status.Conditions[0].LastTransitionTime.In(time.FixedZone("CET", 3600))}
		}, want: true},
		"a new condition": {change: func(a *v1alpha1.Application) {
			a.Status.Conditions = append(a.Status.Conditions, v1alpha1.ApplicationCondition{Type: "ComparisonError"})
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := base.DeepCopy()
			tc.change(app)
			before := app.DeepCopy()
			if got := OnlyTimestamps(app, base); got != tc.want {
				t.Errorf("OnlyTimestamps = %v, want %v", got, tc.want)
			}
			if !equality.Semantic.DeepEqual(app, before) {
				t.Errorf("OnlyTimestamps changed the app: reconciledAt %v, observedAt %v; was %v, %v",
					app.Status.ReconciledAt, app.Status.ObservedAt, before.Status.ReconciledAt, before.Status.ObservedAt)
			}
		})
	}
}

// BenchmarkOnlyTimestamps is the quiet refresh of an idle app: its new
// comparison differs from the copy last written in its timestamps only.
func BenchmarkOnlyTimestamps(b *testing.B) {
	base := syncedApp(b)
	app := base.DeepCopy()
	later := metav1.NewTime(base.Status.ReconciledAt.Add(3 * time.Minute))
	app.Status.ReconciledAt, app.Status.ObservedAt = &later, &later
	b.ReportAllocs()
	for b.Loop() {
		if !OnlyTimestamps(app, base) {
			b.Fatal("OnlyTimestamps = false for a change of the timestamps only")
		}
	}
}

func TestWrittenCovers(t *testing.T) {
	var w versions
	web, never, odd := client.ObjectKey{Namespace: "argocd", Name: "web"}, client.ObjectKey{Namespace: "argocd", Name: "never"}, client.ObjectKey{Namespace: "argocd", Name: "odd"}
	if !w.covers(web, "5") {
		t.Error("an app never written is not covered by the cache")
	}
	w.set(web, "10")
	w.set(web, "7") // an older write returning late does not go back
	for rv, want := range map[string]bool{"9": false, "10": true, "11": true, "x": false} {
		if got := w.covers(web, rv); got != want {
			t.Errorf("covers(web, %q) = %v, want %v", rv, got, want)
		}
	}
	if w.includesLast(never, "5") {
		t.Error("an app never written is known to include the last write")
	}
	if !w.includesLast(web, "10") || w.includesLast(web, "9") {
		t.Error("includesLast disagrees with the last write at version 10")
	}
	w.set(odd, "not-a-number")
	if w.covers(odd, "99999") {
		t.Error("a version that is not a number is covered")
	}
	if w.includesLast(client.ObjectKey{Namespace: "team-a", Name: "web"}, "10") {
		t.Error("an app of the same name in another namespace shares the last write")
	}
	w.forget(web)
	if !w.covers(web, "1") {
		t.Error("a forgotten app is still tracked")
	}
}
