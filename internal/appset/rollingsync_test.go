package appset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// appState is an app as the Application controller left it.
type appState struct {
	name, env           string
	sync, health, phase string
	// started is when its last operation started, relative to the
	// previous rollout transition (negative: before it).
	started   time.Duration
	operation bool
}

type rolloutStatus struct{ app, status, step string }

func TestPlanRollout(t *testing.T) {
	steps := []v1alpha1.ApplicationSetRolloutStep{
		{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"dev"}}}},
		{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"prod"}}}},
	}
	tests := []struct {
		desc      string
		prev      []rolloutStatus
		apps      []appState
		maxUpdate *intstr.IntOrString
		want      []rolloutStatus
		wantSync  []string
	}{
		{
			desc: "new apps not compared yet: the first step is Pending, nothing synced yet",
			apps: []appState{{name: "dev", env: "dev"}, {name: "p1", env: "prod"}},
			want: []rolloutStatus{{"dev", "Pending", "1"}, {"p1", "Waiting", "2"}},
		},
		{
			desc:     "a Pending OutOfSync app of an open step gets its sync",
			prev:     []rolloutStatus{{"dev", "Pending", "1"}, {"p1", "Waiting", "2"}},
			apps:     []appState{{name: "dev", env: "dev", sync: "OutOfSync", health: "Missing"}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Missing"}},
			want:     []rolloutStatus{{"dev", "Pending", "1"}, {"p1", "Waiting", "2"}},
			wantSync: []string{"dev"},
		},
		{
			desc: "a sync already started since the app went Pending is not asked again",
			prev: []rolloutStatus{{"dev", "Pending", "1"}},
			apps: []appState{{name: "dev", env: "dev", sync: "OutOfSync", health: "Missing", phase: "Failed", started: time.Second}},
			want: []rolloutStatus{{"dev", "Pending", "1"}},
		},
		{
			desc: "a running sync makes the app Progressing; the next step waits",
			prev: []rolloutStatus{{"dev", "Pending", "1"}, {"p1", "Waiting", "2"}},
			apps: []appState{{name: "dev", env: "dev", sync: "Synced", health: "Progressing", phase: "Running", started: time.Second}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Missing"}},
			want: []rolloutStatus{{"dev", "Progressing", "1"}, {"p1", "Waiting", "2"}},
		},
		{
			desc:     "once the first step is Healthy the next one is Pending and synced",
			prev:     []rolloutStatus{{"dev", "Progressing", "1"}, {"p1", "Waiting", "2"}, {"p2", "Waiting", "2"}},
			apps:     []appState{{name: "dev", env: "dev", sync: "Synced", health: "Healthy", phase: "Succeeded", started: time.Second}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Missing"}, {name: "p2", env: "prod", sync: "OutOfSync", health: "Missing"}},
			want:     []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Pending", "2"}, {"p2", "Pending", "2"}},
			wantSync: []string{"p1", "p2"},
		},
		{
			desc:      "maxUpdate bounds the apps of a step updating at once",
			prev:      []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Waiting", "2"}, {"p2", "Waiting", "2"}},
			apps:      []appState{{name: "dev", env: "dev", sync: "Synced", health: "Healthy"}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Missing"}, {name: "p2", env: "prod", sync: "OutOfSync", health: "Missing"}},
			maxUpdate: ptr(intstr.FromString("10%")),
			want:      []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Pending", "2"}, {"p2", "Waiting", "2"}},
			wantSync:  []string{"p1"},
		},
		{
			desc:      "maxUpdate 0 holds the step",
			prev:      []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Waiting", "2"}},
			apps:      []appState{{name: "dev", env: "dev", sync: "Synced", health: "Healthy"}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Missing"}},
			maxUpdate: ptr(intstr.FromInt32(0)),
			want:      []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Waiting", "2"}},
		},
		{
			desc: "a Healthy app that goes OutOfSync waits again and holds the next step",
			prev: []rolloutStatus{{"dev", "Healthy", "1"}, {"p1", "Healthy", "2"}},
			apps: []appState{{name: "dev", env: "dev", sync: "OutOfSync", health: "Healthy", phase: "Succeeded", started: -time.Minute}, {name: "p1", env: "prod", sync: "OutOfSync", health: "Healthy"}},
			want: []rolloutStatus{{"dev", "Pending", "1"}, {"p1", "Waiting", "2"}},
			// The old sync started before the new Pending transition.
			wantSync: []string{"dev"},
		},
		{
			desc: "an app matching no step is never synced by the rollout",
			apps: []appState{{name: "dev", env: "dev", sync: "Synced", health: "Healthy"}, {name: "qa", env: "qa", sync: "OutOfSync", health: "Missing"}},
			want: []rolloutStatus{{"dev", "Healthy", "1"}, {"qa", "Waiting", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			prevAt := metav1.NewTime(now.Add(-10 * time.Second))
			set := &v1alpha1.ApplicationSet{Spec: v1alpha1.ApplicationSetSpec{Strategy: &v1alpha1.ApplicationSetStrategy{
				Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{Steps: steps},
			}}}
			set.Spec.Strategy.RollingSync.Steps[1].MaxUpdate = tt.maxUpdate
			for _, p := range tt.prev {
				set.Status.ApplicationStatus = append(set.Status.ApplicationStatus, v1alpha1.ApplicationSetApplicationStatus{
					Application: p.app, Status: p.status, Step: p.step, LastTransitionTime: &prevAt,
				})
			}
			var apps []v1alpha1.Application
			for _, s := range tt.apps {
				app := v1alpha1.Application{}
				app.Name, app.Labels = s.name, map[string]string{"env": s.env}
				app.Status.Sync.Status, app.Status.Health.Status = v1alpha1.SyncStatusCode(s.sync), v1alpha1.HealthStatusCode(s.health)
				if s.phase != "" {
					app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationPhase(s.phase), StartedAt: metav1.NewTime(prevAt.Add(s.started))}
				}
				if s.operation {
					app.Operation = &v1alpha1.Operation{}
				}
				apps = append(apps, app)
			}
			plan := planRollout(set, apps, apps, now)
			var got []rolloutStatus
			for _, st := range plan.statuses {
				got = append(got, rolloutStatus{st.Application, st.Status, st.Step})
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(rolloutStatus{})); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			var synced []string
			for _, a := range plan.apply(apps) {
				if a.Operation != nil && a.Operation.InitiatedBy.Username == "applicationset-controller" {
					synced = append(synced, a.Name)
				}
			}
			if diff := cmp.Diff(tt.wantSync, synced, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("synced apps (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
