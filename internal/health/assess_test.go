package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const deploymentOverride = `return { status = "Degraded", message = "from argocd-cm" }`

func TestAssessPrecedence(t *testing.T) {
	cm := map[string]string{KeyHealthPrefix + "apps_Deployment": deploymentOverride}
	tests := map[string]struct {
		opts    Options
		fixture string
		want    Result
	}{
		"built-in check": {
			fixture: "assess/deployment.yaml",
			want:    Result{Status: Status{Status: Healthy}, Source: SourceBuiltin},
		},
		"library wins over built-in": {
			opts:    Options{LibraryDir: "testdata/precedence"},
			fixture: "assess/deployment.yaml",
			want:    Result{Status: Status{Suspended, "from the library"}, Source: "apps/Deployment/health.lua"},
		},
		"argocd-cm wins over library": {
			opts:    Options{Settings: cm, LibraryDir: "testdata/precedence"},
			fixture: "assess/deployment.yaml",
			want:    Result{Status: Status{Degraded, "from argocd-cm"}, Source: "argocd-cm resource.customizations.health.apps_Deployment"},
		},
		"pending deletion wins over argocd-cm": {
			opts:    Options{Settings: cm},
			fixture: "assess/deployment-deleting.yaml",
			want:    Result{Status: Status{Progressing, "Pending deletion"}, Source: SourcePendingDeletion},
		},
		"hook held by its finalizer is assessed while deleted": {
			fixture: "assess/job-hook-deleting.yaml",
			want:    Result{Status: Status{Status: Healthy}, Source: SourceBuiltin},
		},
		"no check for a ConfigMap": {
			fixture: "assess/configmap.yaml",
			want:    Result{},
		},
		"no check for a custom resource by default": {
			fixture: "assess/widget.yaml",
			want:    Result{},
		},
		"library script for a custom resource": {
			opts:    Options{LibraryDir: "testdata/lua"},
			fixture: "assess/widget.yaml",
			want:    Result{Status: Status{Healthy, "widget is serving"}, Source: "example.com/Widget/health.lua"},
		},
		"generic check for a custom resource when enabled": {
			opts:    Options{GenericConditions: true},
			fixture: "assess/widget.yaml",
			want:    Result{Status: Status{Healthy, "widget is serving"}, Source: SourceGeneric},
		},
		"generic check enabled in argocd-cm": {
			opts:    Options{Settings: map[string]string{KeyGenericConditions: "true"}},
			fixture: "assess/widget.yaml",
			want:    Result{Status: Status{Healthy, "widget is serving"}, Source: SourceGeneric},
		},
		"argo parity turns the generic check off": {
			opts:    Options{GenericConditions: true, ArgoParity: true},
			fixture: "assess/widget.yaml",
			want:    Result{},
		},
		"child Application reports its health": {
			fixture: "assess/app-degraded.yaml",
			want:    Result{Status: Status{Degraded, `Deployment "web" exceeded its progress deadline`}, Source: SourceApplication},
		},
		"child Application without health yet": {
			fixture: "assess/app-new.yaml",
			want:    Result{Status: Status{Status: Progressing}, Source: SourceApplication},
		},
		"child Application with an unknown health code": {
			fixture: "assess/app-bogus.yaml",
			want:    Result{Status: Status{Unknown, `application reports an unknown health status "Fine"`}, Source: SourceApplication},
		},
		"child Application whose new spec is not compared yet": {
			fixture: "assess/app-spec-changed.yaml",
			want:    Result{Status: Status{Progressing, "waiting for the controller to compare the current spec"}, Source: SourceApplication},
		},
		"child Application with a requested sync": {
			fixture: "assess/app-operation-requested.yaml",
			want:    Result{Status: Status{Progressing, "sync requested"}, Source: SourceApplication},
		},
		"child Application with a running sync": {
			fixture: "assess/app-sync-running.yaml",
			want:    Result{Status: Status{Progressing, "sync running: waiting for StatefulSet web/redis: 0/1 ready"}, Source: SourceApplication},
		},
		"automatically synced child Application that is OutOfSync": {
			fixture: "assess/app-automated-outofsync.yaml",
			want:    Result{Status: Status{Progressing, "waiting for automated sync (OutOfSync)"}, Source: SourceApplication},
		},
		"automatically synced child Application whose comparison failed": {
			fixture: "assess/app-automated-unknown.yaml",
			want:    Result{Status: Status{Progressing, "waiting for automated sync (Unknown)"}, Source: SourceApplication},
		},
		"manually synced child Application keeps its health when OutOfSync": {
			fixture: "assess/app-manual-outofsync.yaml",
			want:    Result{Status: Status{Status: Healthy}, Source: SourceApplication},
		},
		"child Application health off in argo parity": {
			opts:    Options{ArgoParity: true},
			fixture: "assess/app-degraded.yaml",
			want:    Result{},
		},
		"child Application health off in argocd-cm": {
			opts:    Options{Settings: map[string]string{KeyApplicationHealth: "false"}},
			fixture: "assess/app-degraded.yaml",
			want:    Result{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := newTestAssessor(t, tc.opts)
			got := a.Explain(readFixture(t, tc.fixture))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.Status, a.Assess(readFixture(t, tc.fixture))); diff != "" {
				t.Errorf("Assess and Explain disagree (-explain +assess):\n%s", diff)
			}
		})
	}
}

func TestGenericConditions(t *testing.T) {
	tests := map[string]struct {
		fixture string
		want    Status
	}{
		"ready":                             {"ready", Status{Healthy, "database is accepting connections"}},
		"not ready with a failure reason":   {"ready-false-failed", Status{Degraded, "volume quota exceeded"}},
		"not ready while provisioning":      {"ready-false-waiting", Status{Progressing, "Provisioning"}},
		"readiness unknown":                 {"ready-unknown", Status{Progressing, "reconciliation in progress"}},
		"Available when there is no Ready":  {"available", Status{Healthy, "replicas available"}},
		"observedGeneration behind":         {"generation-behind", Status{Progressing, "Waiting for the controller to observe generation 3 (observed 2)"}},
		"condition for an older generation": {"condition-generation-behind", Status{Progressing, "Waiting for the controller to observe generation 3 (Ready condition is for 2)"}},
		"stalled":                           {"stalled", Status{Degraded, "spec.size must be positive"}},
		"no conditions":                     {"no-conditions", Status{}},
		"Kubernetes API group":              {"builtin-group", Status{}},
	}
	a := newTestAssessor(t, Options{GenericConditions: true})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := a.Assess(readFixture(t, "generic/"+tc.fixture+".yaml"))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("health mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := map[string]struct {
		opts Options
		want string
	}{
		"missing library": {
			opts: Options{LibraryDir: "testdata/no-such-dir"},
			want: "customizations library testdata/no-such-dir: lstat testdata/no-such-dir: no such file or directory",
		},
		"bad setting": {
			opts: Options{Settings: map[string]string{KeyApplicationHealth: "maybe"}},
			want: `argocd-cm key wavecd.application.health: strconv.ParseBool: parsing "maybe": invalid syntax`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
