package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	configMapGK  = schema.GroupKind{Kind: "ConfigMap"}
)

// res describes a resource for the aggregation table: a fixture under
// testdata/assess, or a missing object of a group and kind.
type res struct {
	fixture     string
	missing     schema.GroupKind
	justCreated bool
}

func TestAggregate(t *testing.T) {
	tests := map[string]struct {
		opts      Options
		resources []res
		want      AppHealth
	}{
		"no resources": {
			want: AppHealth{Status: Healthy, Resources: []Status{}},
		},
		"worst health wins": {
			resources: []res{{fixture: "deployment"}, {fixture: "job-suspended"}, {fixture: "pvc-pending"}},
			want: AppHealth{Status: Progressing, Resources: []Status{
				{Status: Healthy}, {Suspended, "Job suspended"}, {Status: Progressing},
			}},
		},
		"objects without a check do not count": {
			resources: []res{{fixture: "configmap"}, {fixture: "job-suspended"}},
			want:      AppHealth{Status: Suspended, Resources: []Status{{}, {Suspended, "Job suspended"}}},
		},
		"hooks and ignored objects do not count": {
			resources: []res{{fixture: "deployment"}, {fixture: "pod-hook"}, {fixture: "pod-ignored"}},
			want:      AppHealth{Status: Healthy, Resources: []Status{{Status: Healthy}, {}, {}}},
		},
		"a Skip hook is not a hook": {
			resources: []res{{fixture: "pod-skip-hook"}},
			want:      AppHealth{Status: Progressing, Resources: []Status{{Status: Progressing}}},
		},
		"missing object with a check counts": {
			resources: []res{{fixture: "deployment"}, {missing: deploymentGK}},
			want:      AppHealth{Status: Missing, Resources: []Status{{Status: Healthy}, {Status: Missing}}},
		},
		"missing object without a check does not count": {
			resources: []res{{fixture: "deployment"}, {missing: configMapGK}},
			want:      AppHealth{Status: Healthy, Resources: []Status{{Status: Healthy}, {Status: Missing}}},
		},
		"degraded child Application counts": {
			resources: []res{{fixture: "deployment"}, {fixture: "app-degraded"}},
			want: AppHealth{Status: Degraded, Resources: []Status{
				{Status: Healthy}, {Degraded, `Deployment "web" exceeded its progress deadline`},
			}},
		},
		"unknown child Applications and absent ones not just created do not count": {
			resources: []res{{fixture: "app-healthy"}, {fixture: "app-unknown"}, {missing: applicationGroupKind}},
			want: AppHealth{Status: Healthy, Resources: []Status{
				{Status: Healthy}, {Status: Unknown}, {Status: Missing},
			}},
		},
		"child Application whose own resources are missing counts as progressing": {
			resources: []res{{fixture: "app-healthy"}, {fixture: "app-missing"}},
			want: AppHealth{Status: Progressing, Resources: []Status{
				{Status: Healthy}, {Progressing, "waiting for the application's resources to be created"},
			}},
		},
		"just created child Application that is missing counts as progressing": {
			resources: []res{{fixture: "app-healthy"}, {fixture: "app-missing", justCreated: true}, {missing: applicationGroupKind, justCreated: true}},
			want: AppHealth{Status: Progressing, Resources: []Status{
				{Status: Healthy},
				{Progressing, "waiting for the application's resources to be created"},
				{Progressing, "Waiting for the new child application to appear"},
			}},
		},
		"argo parity: child Applications have no health": {
			opts:      Options{ArgoParity: true},
			resources: []res{{fixture: "deployment"}, {fixture: "app-degraded"}, {missing: applicationGroupKind, justCreated: true}},
			want:      AppHealth{Status: Healthy, Resources: []Status{{Status: Healthy}, {}, {Status: Missing}}},
		},
		"object being deleted is progressing": {
			resources: []res{{fixture: "deployment-deleting"}},
			want:      AppHealth{Status: Progressing, Resources: []Status{{Progressing, "Pending deletion"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := newTestAssessor(t, tc.opts)
			resources := make([]Resource, len(tc.resources))
			for i, r := range tc.resources {
				resources[i] = Resource{GroupKind: r.missing, JustCreated: r.justCreated}
				if r.fixture != "" {
					resources[i].Live = readFixture(t, "assess/"+r.fixture+".yaml")
					resources[i].GroupKind = resources[i].Live.GroupVersionKind().GroupKind()
				}
			}
			if diff := cmp.Diff(tc.want, a.Aggregate(resources, nil)); diff != "" {
				t.Errorf("aggregate mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsWorse(t *testing.T) {
	ordered := []Code{Healthy, Suspended, Progressing, Missing, Degraded, Unknown}
	for i, current := range ordered {
		for j, next := range ordered {
			if got, want := IsWorse(current, next), j > i; got != want {
				t.Errorf("IsWorse(%s, %s) = %v, want %v", current, next, got, want)
			}
		}
	}
}
