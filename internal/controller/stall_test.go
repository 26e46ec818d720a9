package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// provisionerFixture is one case of testdata/provisioners.
type provisionerFixture struct {
	Candidates []struct {
		Parent  string               `json:"parent"`
		Created bool                 `json:"created"`
		App     v1alpha1.Application `json:"app"`
		Objects []map[string]any     `json:"objects"`
	} `json:"candidates"`
	Want []wsync.NodeProvisioner `json:"want"`
}

func TestNodeProvisionersOf(t *testing.T) {
	eachFixture(t, "testdata/provisioners", func(t *testing.T, f *provisionerFixture) {
		var cands []provisionerCandidate
		for i := range f.Candidates {
			c := f.Candidates[i]
			pc := provisionerCandidate{app: &c.App, parent: c.Parent, created: c.Created}
			for _, o := range c.Objects {
				pc.objects = append(pc.objects, &unstructured.Unstructured{Object: o})
			}
			cands = append(cands, pc)
		}
		got := nodeProvisionersOf(cands)
		if diff := cmp.Diff(f.Want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("provisioners (-want +got):\n%s", diff)
		}
	})
}

func TestMarkStalled(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		before []string // condition types present before
		st     wsync.State
		want   map[string]string
	}{
		"stalled sets the condition": {
			st:   wsync.State{Phase: wsync.OperationRunning, Stalled: "wave 0 of calico waits on X"},
			want: map[string]string{v1alpha1.ApplicationConditionSyncStalled: "stalled: wave 0 of calico waits on X"},
		},
		"progress clears it": {
			before: []string{v1alpha1.ApplicationConditionSyncStalled, v1alpha1.ApplicationConditionSyncError},
			st:     wsync.State{Phase: wsync.OperationRunning},
			want:   map[string]string{v1alpha1.ApplicationConditionSyncError: "old"},
		},
		"a finished sync clears it": {
			before: []string{v1alpha1.ApplicationConditionSyncStalled},
			st:     wsync.State{Phase: wsync.OperationFailed, Stalled: "left over"},
			want:   map[string]string{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			status := &v1alpha1.ApplicationStatus{}
			for _, typ := range tc.before {
				setCondition(status, typ, "old", now)
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
