package appclient

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestParseResource(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    v1alpha1.SyncOperationResource
		wantErr bool
	}{
		"group, kind and name":   {in: "apps:Deployment:web", want: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Name: "web"}},
		"core kind":              {in: ":Service:web", want: v1alpha1.SyncOperationResource{Kind: "Service", Name: "web"}},
		"with namespace":         {in: "apps:Deployment:prod/web", want: v1alpha1.SyncOperationResource{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}},
		"globs":                  {in: "*:*:web-*", want: v1alpha1.SyncOperationResource{Group: "*", Kind: "*", Name: "web-*"}},
		"two fields":             {in: "Deployment:web", wantErr: true},
		"four fields":            {in: "apps:v1:Deployment:web", wantErr: true},
		"empty kind":             {in: "apps::web", wantErr: true},
		"empty name":             {in: "apps:Deployment:", wantErr: true},
		"empty namespace":        {in: "apps:Deployment:/web", wantErr: true},
		"two slashes":            {in: "apps:Deployment:a/b/c", wantErr: true},
		"malformed glob":         {in: "apps:Deployment:web[", wantErr: true},
		"slashes instead of ':'": {in: "apps/Deployment/web", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseResource(tc.in)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), `"`+tc.in+`"`) {
					t.Fatalf("ParseResource(%q) = %+v, %v; want an error naming the value", tc.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppOptionsApply(t *testing.T) {
	str := func(s string) *string { return &s }
	yes, no := true, false
	automated := func() *v1alpha1.ApplicationSpec {
		return &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}}
	}
	tests := map[string]struct {
		spec    *v1alpha1.ApplicationSpec
		opts    AppOptions
		want    *v1alpha1.ApplicationSpec
		wantErr string
	}{
		"source fields create the source": {
			spec: &v1alpha1.ApplicationSpec{}, opts: AppOptions{Repo: str("r"), Path: str("p")},
			want: &v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r", Path: "p"}},
		},
		"automated keeps existing settings": {
			spec: automated(), opts: AppOptions{SyncPolicy: str("auto"), SelfHeal: &yes},
			want: &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}},
		},
		"none drops an empty policy": {spec: automated(), opts: AppOptions{SyncPolicy: str("none")}, want: &v1alpha1.ApplicationSpec{}},
		"turn prune off":             {spec: automated(), opts: AppOptions{AutoPrune: &no}, want: &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}},
		"options add once and remove": {
			spec: &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{SyncOptions: v1alpha1.SyncOptions{"A=true", "B=true"}}},
			opts: AppOptions{SyncOptions: []string{"A=true", "!B=true", "C=true"}},
			want: &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{SyncOptions: v1alpha1.SyncOptions{"A=true", "C=true"}}},
		},
		"allow-empty needs automated": {spec: &v1alpha1.ApplicationSpec{}, opts: AppOptions{AllowEmpty: &yes}, wantErr: "cannot set --allow-empty"},
		"automated turned off by enabled=false counts as off": {
			spec:    &v1alpha1.ApplicationSpec{SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &no}}},
			opts:    AppOptions{SelfHeal: &yes},
			wantErr: "cannot set --self-heal",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.Apply(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.spec); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForReached(t *testing.T) {
	finished := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	later := metav1.NewTime(finished.Add(time.Second))
	app := func(sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode, edit func(*v1alpha1.Application)) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Status.Sync.Status, a.Status.Health.Status = sync, health
		if edit != nil {
			edit(a)
		}
		return a
	}
	synced := v1alpha1.SyncStatusCodeSynced
	doneAt := func(reconciled *metav1.Time) func(*v1alpha1.Application) {
		return func(a *v1alpha1.Application) {
			a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, FinishedAt: &finished}
			a.Status.ReconciledAt = reconciled
		}
	}
	tests := map[string]struct {
		waitFor WaitFor
		app     *v1alpha1.Application
		want    bool
	}{
		"default: all three":                {WaitFor{}, app(synced, "Healthy", nil), true},
		"default: out of sync":              {WaitFor{}, app(v1alpha1.SyncStatusCodeOutOfSync, "Healthy", nil), false},
		"health only ignores sync":          {WaitFor{Health: true}, app(v1alpha1.SyncStatusCodeOutOfSync, "Healthy", nil), true},
		"suspended accepted":                {WaitFor{Health: true, Suspended: true}, app(synced, "Suspended", nil), true},
		"suspended alone rejects healthy":   {WaitFor{Suspended: true}, app(synced, "Healthy", nil), false},
		"operation requested":               {WaitFor{Operation: true}, app(synced, "Healthy", func(a *v1alpha1.Application) { a.Operation = &v1alpha1.Operation{} }), false},
		"operation finished, not compared":  {WaitFor{Operation: true}, app(synced, "Healthy", doneAt(nil)), false},
		"operation finished and compared":   {WaitFor{Operation: true}, app(synced, "Healthy", doneAt(&later)), true},
		"operation running, not waited for": {WaitFor{Sync: true}, app(synced, "Healthy", func(a *v1alpha1.Application) { a.Operation = &v1alpha1.Operation{} }), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.waitFor.orDefault().reached(tc.app); got != tc.want {
				t.Errorf("reached = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourceStates(t *testing.T) {
	app := &v1alpha1.Application{}
	app.Status.Resources = []v1alpha1.ResourceStatus{
		{Kind: "Service", Namespace: "web", Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: "Healthy"}},
		{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web", Status: v1alpha1.SyncStatusCodeOutOfSync},
		{Kind: "ConfigMap", Namespace: "web", Name: "a", Status: v1alpha1.SyncStatusCodeSynced},
	}
	app.Status.OperationState = &v1alpha1.OperationState{SyncResult: &v1alpha1.SyncOperationResult{Resources: v1alpha1.ResourceResults{
		{Group: "batch", Kind: "Job", Namespace: "web", Name: "migrate", Status: v1alpha1.ResultCodeSynced, HookType: "PreSync", HookPhase: "Succeeded", Message: "done"},
		{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web", Status: v1alpha1.ResultCodeSynced, Message: "configured"},
	}}}
	want := []ResourceState{
		{Group: "batch", Kind: "Job", Namespace: "web", Name: "migrate", Status: "Succeeded", Health: "Synced", Hook: "PreSync", Message: "done"},
		{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "web", Status: "OutOfSync", Message: "configured"},
		{Kind: "ConfigMap", Namespace: "web", Name: "a", Status: "Synced"},
		{Kind: "Service", Namespace: "web", Name: "web", Status: "Synced", Health: "Healthy"},
	}
	if diff := cmp.Diff(want, ResourceStates(app)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOperationMatches(t *testing.T) {
	written := &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Prune: true, Resources: []v1alpha1.SyncOperationResource{{Kind: "Service", Name: "web"}}},
		InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"},
	}
	edit := func(f func(o *v1alpha1.Operation)) *v1alpha1.Operation {
		o := written.DeepCopy()
		f(o)
		return o
	}
	tests := map[string]struct {
		observed *v1alpha1.Operation
		want     bool
	}{
		"same":                            {written.DeepCopy(), true},
		"revision resolved by controller": {edit(func(o *v1alpha1.Operation) { o.Sync.Revision = "1a2b3c4" }), true},
		"other user":                      {edit(func(o *v1alpha1.Operation) { o.InitiatedBy.Username = "bob" }), false},
		"automated sync":                  {edit(func(o *v1alpha1.Operation) { o.InitiatedBy = v1alpha1.OperationInitiator{Automated: true} }), false},
		"other resources":                 {edit(func(o *v1alpha1.Operation) { o.Sync.Resources = nil }), false},
		"no sync":                         {&v1alpha1.Operation{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := operationMatches(written, tc.observed); got != tc.want {
				t.Errorf("operationMatches = %v, want %v", got, tc.want)
			}
		})
	}
}
