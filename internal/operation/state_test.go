package operation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

func TestMarkStalled(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		before []string // condition types present before
		st     wsync.State
		want   map[string]string
	}{
		"stalled sets the condition": {
			st:   wsync.State{Phase: v1alpha1.OperationRunning, Stalled: "wave 0 of calico waits on X"},
			want: map[string]string{v1alpha1.ApplicationConditionSyncStalled: "stalled: wave 0 of calico waits on X"},
		},
		"progress clears it": {
			before: []string{v1alpha1.ApplicationConditionSyncStalled, v1alpha1.ApplicationConditionSyncError},
			st:     wsync.State{Phase: v1alpha1.OperationRunning},
			want:   map[string]string{v1alpha1.ApplicationConditionSyncError: "old"},
		},
		"a finished sync clears it": {
			before: []string{v1alpha1.ApplicationConditionSyncStalled},
			st:     wsync.State{Phase: v1alpha1.OperationFailed, Stalled: "left over"},
			want:   map[string]string{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			status := &v1alpha1.ApplicationStatus{}
			for _, typ := range tc.before {
				application.SetCondition(status, typ, "old", now)
			}
			markStalled(status, &tc.st, now)
			got := map[string]string{}
			for _, c := range status.Conditions {
				got[c.Type] = c.Message
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
