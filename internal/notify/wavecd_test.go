package notify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func stalledApp(msg string) *v1alpha1.Application {
	return &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{Conditions: []v1alpha1.ApplicationCondition{
		{Type: v1alpha1.ApplicationConditionSyncStalled, Message: msg},
	}}}
}

// TestStallOf reads the stall explanations internal/sync writes.
func TestStallOf(t *testing.T) {
	ignore := cmpopts.IgnoreFields(Stall{}, "Message", "Since")
	for name, tc := range map[string]struct {
		msg  string
		want Stall
	}{
		"own deployment, provisioner in a later wave": {
			msg: "stalled: wave 0 of calico waits on Deployment calico-system/tigera-operator: pod tigera-operator-x Pending: 0/1 nodes are available: 1 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}; no node provisioner is running; karpenter is in wave 1 of root",
			want: Stall{Stalled: true, Step: "wave 0", Object: "Deployment calico-system/tigera-operator", Pod: "tigera-operator-x",
				Reason: "0/1 nodes are available: 1 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}", Provisioner: "no node provisioner is running; karpenter is in wave 1 of root", Origin: true},
		},
		"through a child app": {
			msg: "stalled: wave 0 of root waits on Application calico: Deployment calico-system/tigera-operator: pod tigera-operator-x Pending: 0/1 nodes are available; no node provisioner is running; karpenter is in wave 1 of root",
			want: Stall{Stalled: true, Step: "wave 0", Object: "Deployment calico-system/tigera-operator", Through: "calico", Pod: "tigera-operator-x",
				Reason: "0/1 nodes are available", Provisioner: "no node provisioner is running; karpenter is in wave 1 of root"},
		},
		"more objects, a hook phase, no provisioner finder": {
			msg:  "PreSync wave 1 of db waits on Job db/migrate: pod migrate-abc Pending: 0/3 nodes are available: 3 Insufficient memory, and on 2 more objects whose pods cannot be scheduled",
			want: Stall{Stalled: true, Step: "PreSync wave 1", Object: "Job db/migrate", Pod: "migrate-abc", Reason: "0/3 nodes are available: 3 Insufficient memory", Origin: true},
		},
		"a running provisioner": {
			msg:  "wave 2 of web waits on StatefulSet web/cache: pod cache-0 Pending: 0/4 nodes are available; node provisioner karpenter is running but made no node for them",
			want: Stall{Stalled: true, Step: "wave 2", Object: "StatefulSet web/cache", Pod: "cache-0", Reason: "0/4 nodes are available", Provisioner: "node provisioner karpenter is running but made no node for them", Origin: true},
		},
		"a message of another shape": {msg: "stalled", want: Stall{Stalled: true, Origin: true}},
	} {
		t.Run(name, func(t *testing.T) {
			got := StallOf(stalledApp(tc.msg))
			if diff := cmp.Diff(tc.want, got, ignore); diff != "" {
				t.Errorf("StallOf (-want +got):\n%s", diff)
			}
			if got.Message != tc.msg {
				t.Errorf("Message = %q", got.Message)
			}
		})
	}
	if s := StallOf(&v1alpha1.Application{}); s.Stalled || s.Origin {
		t.Errorf("an app without the condition: %+v", s)
	}
}

func TestDependencyWaitOf(t *testing.T) {
	since := metav1.NewTime(testNow.Add(-7 * time.Minute))
	app := &v1alpha1.Application{Status: v1alpha1.ApplicationStatus{Conditions: []v1alpha1.ApplicationCondition{
		{Type: v1alpha1.ApplicationConditionDependencyWait, Message: "waiting for db: Progressing", LastTransitionTime: &since},
	}}}
	want := DependencyWait{Waiting: true, Message: "waiting for db: Progressing", Since: since.Time, For: 7 * time.Minute}
	if diff := cmp.Diff(want, DependencyWaitOf(app, testNow)); diff != "" {
		t.Errorf("DependencyWaitOf (-want +got):\n%s", diff)
	}
	if w := DependencyWaitOf(&v1alpha1.Application{}, testNow); w.Waiting {
		t.Errorf("no condition: %+v", w)
	}
}

// TestBootstrapOf times a root app of apps and its waves from the apps'
// own status timestamps.
func TestBootstrapOf(t *testing.T) {
	complete := loadApps(t, "bootstrap/complete.yaml")
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 10, 0, s, 0, time.UTC) }
	for name, tc := range map[string]struct {
		app  *v1alpha1.Application
		all  []*v1alpha1.Application
		want Bootstrap
	}{
		"settled root": {app: complete[0], all: complete, want: Bootstrap{
			Root: true, Complete: true, Apps: []string{"app-a", "app-b"}, Started: at(1), Finished: at(25), WallTime: 24 * time.Second,
			Waves: []WaveTime{
				{Parent: "root", Wave: 0, Apps: []string{"app-a"}, Took: 10 * time.Second},
				{Parent: "root", Wave: 1, Apps: []string{"app-b"}, Took: 14 * time.Second},
			},
			Slowest: WaveTime{Parent: "root", Wave: 1, Apps: []string{"app-b"}, Took: 14 * time.Second},
		}},
		"a child is no root":      {app: complete[1], all: complete, want: Bootstrap{}},
		"an app without children": {app: toApp(loadApp(t, "apps/deployed.yaml")), all: complete, want: Bootstrap{}},
	} {
		t.Run(name, func(t *testing.T) {
			got := BootstrapOf(tc.app, tc.all)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BootstrapOf (-want +got):\n%s", diff)
			}
		})
	}
	running := loadApps(t, "bootstrap/running.yaml")
	if b := BootstrapOf(running[0], running); !b.Root || b.Complete {
		t.Errorf("root while app-b syncs: Root %v Complete %v, want a root not complete", b.Root, b.Complete)
	}
	failed := loadApps(t, "bootstrap/complete.yaml")
	failed[2].Status.OperationState.Phase = v1alpha1.OperationFailed
	if b := BootstrapOf(failed[0], failed); b.Complete {
		t.Errorf("root whose child app-b's last sync failed: complete")
	}
	stale := loadApps(t, "bootstrap/complete.yaml")
	stale[0].Status.Sync.Revision = "5a6b7c"
	if b := BootstrapOf(stale[0], stale); b.Complete {
		t.Errorf("root at a commit its children (same repository) were not compared with: complete")
	}
	missingChild := loadApps(t, "bootstrap/complete.yaml")[:2]
	if b := BootstrapOf(missingChild[0], missingChild); b.Complete {
		t.Errorf("root whose child app-b does not exist yet: complete")
	}
}
