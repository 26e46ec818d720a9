package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
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
