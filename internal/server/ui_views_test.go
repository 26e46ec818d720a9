package server

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEventRows(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 11, 23, 8, min, 0, 0, time.UTC) }
	core := func(reason string, last time.Time, count int32) corev1.Event {
		return corev1.Event{Reason: reason, Type: corev1.EventTypeNormal, LastTimestamp: metav1.NewTime(last), Count: count}
	}
	series := corev1.Event{Reason: "Series", EventTime: metav1.NewMicroTime(at(1)),
		Series: &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(at(9))}}
	created := corev1.Event{Reason: "Created", ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(2))}}
	for _, tc := range []struct {
		name   string
		events []corev1.Event
		limit  int
		want   []string
	}{
		{"newest first", []corev1.Event{core("A", at(1), 1), core("B", at(5), 2), core("C", at(3), 0)}, 20, []string{"B", "C", "A"}},
		{"cut to the limit", []corev1.Event{core("A", at(1), 1), core("B", at(5), 1), core("C", at(3), 1)}, 2, []string{"B", "C"}},
		{"a series by its last observation, else creation", []corev1.Event{core("A", at(5), 1), series, created}, 20, []string{"Series", "A", "Created"}},
		{"none", nil, 20, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := eventRows(tc.events, tc.limit)
			got := []string{}
			for _, r := range rows {
				got = append(got, r.Reason)
				if r.Count < 1 {
					t.Errorf("%s: count %d, want at least 1", r.Reason, r.Count)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
