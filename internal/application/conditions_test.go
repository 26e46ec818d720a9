package application

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestConditions: a condition set again with its message keeps its time,
// with another message takes the new time; clearing removes only its type.
func TestConditions(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(t0.Add(d)); return &m }
	st := &v1alpha1.ApplicationStatus{}
	SetCondition(st, "SyncError", "boom", t0)
	SetCondition(st, "OrphanedResourceWarning", "2 orphans", t0)
	SetCondition(st, "SyncError", "boom", t0.Add(time.Minute))
	if diff := cmp.Diff(at(0), st.Conditions[0].LastTransitionTime); diff != "" {
		t.Errorf("the same message moved the time (-want +got):\n%s", diff)
	}
	SetCondition(st, "SyncError", "bang", t0.Add(2*time.Minute))
	ClearCondition(st, "OrphanedResourceWarning")
	ClearCondition(st, "NotThere")
	want := []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "bang", LastTransitionTime: at(2 * time.Minute)}}
	if diff := cmp.Diff(want, st.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}
