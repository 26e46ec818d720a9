package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

func TestOnlyTimestamps(t *testing.T) {
	at := func(s int) *metav1.Time { m := metav1.NewTime(time.Unix(int64(s), 0)); return &m }
	base := &v1alpha1.Application{}
	base.Status.ReconciledAt, base.Status.ObservedAt = at(1), at(1)
	base.Status.Health.Status = v1alpha1.HealthStatusCode("Healthy")
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
		"a new condition": {change: func(a *v1alpha1.Application) {
			a.Status.Conditions = append(a.Status.Conditions, v1alpha1.ApplicationCondition{Type: "ComparisonError"})
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := base.DeepCopy()
			tc.change(app)
			if got := onlyTimestamps(app, base); got != tc.want {
				t.Errorf("onlyTimestamps = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNewest: a sync's own writes stand in for cached copies the watch has
// not brought yet, never for newer ones, and never for objects the app
// does not track.
func TestNewest(t *testing.T) {
	tracking := kube.Tracking{Method: kube.TrackingAnnotation, AppName: "web"}
	obj := func(name, rv string, tracked bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		if tracked {
			tracking.Set(u)
		}
		return u
	}
	live := []*unstructured.Unstructured{obj("stale", "5", true), obj("fresh", "9", true)}
	applied := []*unstructured.Unstructured{
		obj("stale", "7", true), obj("fresh", "8", true), obj("new", "6", true), obj("foreign", "4", false),
	}
	got := map[string]string{}
	for _, o := range newest(live, applied, tracking) {
		got[o.GetName()] = o.GetResourceVersion()
	}
	want := map[string]string{"stale": "7", "fresh": "9", "new": "6"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, rv := range want {
		if got[name] != rv {
			t.Errorf("%s at version %s, want %s", name, got[name], rv)
		}
	}
}
