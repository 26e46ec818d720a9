package timeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

func stalledCondition(msg string) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) {
		a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionSyncStalled, Message: "stalled: " + msg}}
	}
}

func TestJudgeDecide(t *testing.T) {
	settled := status("Synced", "Healthy")
	stalledCalico := both(status("OutOfSync", "Missing"), running("stalled: wave 0 of calico waits on X", ""), stalledCondition("wave 0 of calico waits on X"))
	stalledRoot := both(status("OutOfSync", "Healthy"), running("stalled: wave 0 of root waits on Y", ""), stalledCondition("wave 0 of root waits on Y"))
	waiting := both(status("OutOfSync", "Missing"), running("waiting for X", ""))
	retried := both(status("OutOfSync", "Missing"), running("Retrying attempt #4 at 10:00:00: webhook refused", ""))
	failed := both(status("OutOfSync", "Missing"), func(a *v1alpha1.Application) {
		a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationFailed, Message: "webhook refused", StartedAt: metav1.NewTime(t0)}
	})
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	tests := map[string]struct {
		events   []Observation
		now      float64
		activity float64        // last node or pod change, seconds
		want     report.Verdict // "" while the run goes on
		wantAt   float64
		reason   string
	}{
		"settled for long enough": {
			events: []Observation{appAt("root", 1, settled), appAt("calico", 2, settled)},
			now:    5, want: report.Converged, wantAt: 3,
		},
		"a stall, quiet for the grace period": {
			events: []Observation{appAt("root", 1, stalledRoot), appAt("calico", 21, stalledCalico)},
			now:    32, want: report.Stalled, wantAt: 1, reason: "wave 0 of calico waits on X",
		},
		"a stall while nodes still change": {
			events: []Observation{appAt("calico", 21, stalledCalico)},
			now:    32, activity: 25,
		},
		"nothing changes at all": {
			events: []Observation{appAt("calico", 1, waiting)},
			now:    45, want: report.Stalled, wantAt: 1, reason: "nothing changed for 44s",
		},
		"nothing changes while a sync waits for its next attempt": {
			events: []Observation{appAt("calico", 1, waiting), appAt("karpenter", 2, retried)},
			now:    60,
		},
		"nothing changes after the attempts": {
			events: []Observation{appAt("calico", 1, waiting), appAt("karpenter", 2, retried), appAt("karpenter", 10, failed)},
			now:    60, want: report.Stalled, wantAt: 10, reason: "nothing changed for 50s",
		},
		"out of time": {
			events: []Observation{appAt("calico", 1, waiting)},
			now:    100, activity: 99, want: report.TimedOut, wantAt: 100, reason: "not settled within 1m40s",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tr := NewTracker(t0, []string{"root"})
			for _, o := range tc.events {
				tr.Observe(o)
			}
			j := &Judge{StallTimeout: 20 * time.Second, SettleFor: 2 * time.Second, Timeout: 100 * time.Second}
			deadline := t0.Add(j.Timeout)
			var done bool
			// The judge looks every 200ms; settling needs two looks.
			for _, now := range []float64{tc.now - 2, tc.now} {
				done = j.decide(at(now), tr, at(tc.activity), deadline)
			}
			got := struct {
				Verdict report.Verdict
				At      float64
				Reason  string
			}{}
			if done {
				got.Verdict, got.At, got.Reason = j.verdict, j.at.Sub(t0).Seconds(), j.reason
			}
			want := struct {
				Verdict report.Verdict
				At      float64
				Reason  string
			}{tc.want, tc.wantAt, tc.reason}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("judged (-want +got):\n%s", diff)
			}
		})
	}
}
