package server

import (
	"fmt"
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
		// want is each row's reason and count, in order.
		want []string
	}{
		{"newest first; a count of 0 shows as 1", []corev1.Event{core("A", at(1), 1), core("B", at(5), 2), core("C", at(3), 0)}, 20, []string{"B 2", "C 1", "A 1"}},
		{"cut to the limit", []corev1.Event{core("A", at(1), 1), core("B", at(5), 1), core("C", at(3), 1)}, 2, []string{"B 1", "C 1"}},
		{"a series by its last observation and count, else creation", []corev1.Event{core("A", at(5), 1), series, created}, 20, []string{"Series 3", "A 1", "Created 1"}},
		{"none", nil, 20, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			for _, r := range eventRows(tc.events, tc.limit) {
				got = append(got, fmt.Sprintf("%s %d", r.Reason, r.Count))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}
