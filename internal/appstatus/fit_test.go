package appstatus

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// bigApp is an app of n ConfigMaps, all Synced and Healthy, with a sync
// result for each when results is set, and the exceptions listed.
func bigApp(n int, results bool, exceptions ...v1alpha1.ResourceStatus) *v1alpha1.Application {
	app := &v1alpha1.Application{}
	app.Name = "root"
	for i := range n {
		app.Status.Resources = append(app.Status.Resources, v1alpha1.ResourceStatus{
			Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: fmt.Sprintf("config-%05d", i),
			Status: "Synced", Health: &v1alpha1.HealthStatus{Status: "Healthy"},
		})
	}
	app.Status.Resources = append(app.Status.Resources, exceptions...)
	if results {
		app.Status.OperationState = &v1alpha1.OperationState{Phase: "Succeeded", StartedAt: metav1.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}, SyncResult: &v1alpha1.SyncOperationResult{}}
		for _, r := range app.Status.Resources {
			app.Status.OperationState.SyncResult.Resources = append(app.Status.OperationState.SyncResult.Resources,
				&v1alpha1.ResourceResult{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name,
					Status: "Synced", Message: "configmap/" + r.Name + " created"})
		}
	}
	return app
}

func condition(app *v1alpha1.Application) string {
	for _, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionStatusTruncated {
			return c.Message
		}
	}
	return ""
}

func names(app *v1alpha1.Application) map[string]bool {
	out := map[string]bool{}
	for _, r := range app.Status.Resources {
		out[r.Kind+"/"+r.Name] = true
	}
	return out
}

func TestFit(t *testing.T) {
	degraded := v1alpha1.ResourceStatus{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web",
		Status: "Synced", Health: &v1alpha1.HealthStatus{Status: "Degraded", Message: "0/3 ready"}}
	outOfSync := v1alpha1.ResourceStatus{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "changed",
		Status: "OutOfSync", Health: &v1alpha1.HealthStatus{Status: "Healthy"}}
	prune := v1alpha1.ResourceStatus{Version: "v1", Kind: "Service", Namespace: "apps", Name: "old",
		Status: "OutOfSync", RequiresPruning: true}
	tests := map[string]struct {
		app    *v1alpha1.Application
		budget int
		// want: the resources and results listed (-1: all), the names
		// that must be listed, and the condition's message ("" none).
		wantResources, wantResults int
		mustList                   []string
		wantCondition              string
	}{
		"a few entries are never measured": {
			app: bigApp(100, true), budget: 1 << 10, wantResources: -1, wantResults: -1,
		},
		"many entries within the budget": {
			app: bigApp(2000, false), budget: StatusBudget, wantResources: -1, wantResults: -1,
		},
		"too many resources keep the ones needing attention and one of each kind": {
			app: bigApp(5000, false, degraded, outOfSync, prune), budget: 32 << 10,
			wantResources: 257, wantResults: 0,
			mustList:      []string{"Deployment/web", "ConfigMap/changed", "Service/old", "ConfigMap/config-00000"},
			wantCondition: "status lists 257 of 5003 resources and 0 of 0 sync results",
		},
		"resources and sync results share the budget": {
			app: bigApp(3000, true, degraded), budget: 64 << 10,
			wantResources: 237, wantResults: 236,
			mustList:      []string{"Deployment/web", "ConfigMap/config-00000"},
			wantCondition: "status lists 237 of 3001 resources and 236 of 3001 sync results",
		},
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := tc.app
			nRes, nOut := len(app.Status.Resources), len(syncResults(&app.Status))
			Fit(app, tc.budget, now)
			wantRes, wantOut := tc.wantResources, tc.wantResults
			if wantRes < 0 {
				wantRes, wantOut = nRes, nOut
			}
			if got := len(app.Status.Resources); got != wantRes {
				t.Errorf("resources listed: %d, want %d", got, wantRes)
			}
			if got := len(syncResults(&app.Status)); got != wantOut {
				t.Errorf("sync results listed: %d, want %d", got, wantOut)
			}
			listed := names(app)
			for _, n := range tc.mustList {
				if !listed[n] {
					t.Errorf("%s is not listed", n)
				}
			}
			if got := condition(app); !strings.HasPrefix(got, tc.wantCondition) || (got == "") != (tc.wantCondition == "") {
				t.Errorf("condition %q, want one starting %q", got, tc.wantCondition)
			}
			if tc.wantCondition != "" {
				if size := jsonSize(app); size > tc.budget {
					t.Errorf("the fitted app takes %d bytes, above the budget of %d", size, tc.budget)
				}
			}
		})
	}
}

// TestFitIsStable fits the same lists twice, and a fitted app written
// back as it is: the same entries, and the condition keeps its time, so
// that a root app's status is not rewritten on every comparison.
func TestFitIsStable(t *testing.T) {
	first, second := bigApp(4000, true), bigApp(4000, true)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	Fit(first, 64<<10, t0)
	Fit(second, 64<<10, t0)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Fatalf("two fits of the same lists differ:\n%s", diff)
	}
	again := first.DeepCopy()
	Fit(again, 64<<10, t0.Add(time.Hour))
	if diff := cmp.Diff(first, again); diff != "" {
		t.Fatalf("a fitted app fitted again changed:\n%s", diff)
	}
	// A fresh full comparison carries the old condition forward.
	fresh := bigApp(4000, true)
	fresh.Status.Conditions = first.Status.Conditions
	Fit(fresh, 64<<10, t0.Add(time.Hour))
	if diff := cmp.Diff(first, fresh); diff != "" {
		t.Fatalf("a new comparison of the same objects fitted differently:\n%s", diff)
	}
}

// TestFitDropsTheConditionOnceTheStatusFits: the app's objects shrank to
// what the status can list in full.
func TestFitDropsTheConditionOnceTheStatusFits(t *testing.T) {
	app := bigApp(4000, false)
	Fit(app, 64<<10, time.Now())
	if condition(app) == "" {
		t.Fatal("no condition on a truncated status")
	}
	for _, n := range []int{1000, 10} {
		shrunk := bigApp(n, false)
		shrunk.Status.Conditions = app.Status.Conditions
		Fit(shrunk, StatusBudget, time.Now())
		if got := condition(shrunk); got != "" || len(shrunk.Status.Resources) != n {
			t.Errorf("%d objects: %d listed, condition %q; want all and none", n, len(shrunk.Status.Resources), got)
		}
	}
}

func TestShortenMessages(t *testing.T) {
	app := bigApp(3, true)
	long := strings.Repeat("é", messageMax) // two bytes each: a cut may fall inside one
	app.Status.Resources[0].Health.Message = long
	app.Status.OperationState.SyncResult.Resources[1].Message = long
	app.Status.OperationState.Message = "short"
	app.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: long}}
	shortenMessages(app)
	for name, m := range map[string]string{
		"health":    app.Status.Resources[0].Health.Message,
		"result":    app.Status.OperationState.SyncResult.Resources[1].Message,
		"condition": app.Status.Conditions[0].Message,
	} {
		if len(m) > messageMax || !strings.HasSuffix(m, "(cut)") || !json.Valid([]byte(fmt.Sprintf("%q", m))) {
			t.Errorf("%s message: %d bytes, ends %q", name, len(m), m[len(m)-12:])
		}
		if !strings.HasPrefix(m, "éé") || strings.ContainsRune(m, '\uFFFD') {
			t.Errorf("%s message is not a clean cut of the original", name)
		}
	}
	if app.Status.OperationState.Message != "short" {
		t.Errorf("a short message changed: %q", app.Status.OperationState.Message)
	}
}

// TestJSONSize counts what json.Marshal would return, HTML escapes
// included, without keeping it.
func TestJSONSize(t *testing.T) {
	for name, v := range map[string]any{
		"a string with HTML": "<a href='x'>&</a>",
		"an app's status": v1alpha1.ApplicationStatus{
			Resources:  []v1alpha1.ResourceStatus{{Kind: "ConfigMap", Name: "a<b>", Status: v1alpha1.SyncStatusCodeSynced}},
			Conditions: []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "unicode ü and \u2028"}},
		},
		"nil": nil,
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonSize(v); got != len(want) {
			t.Errorf("%s: jsonSize = %d, want %d (%s)", name, got, len(want), want)
		}
	}
}
