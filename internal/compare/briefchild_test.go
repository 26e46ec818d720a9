package compare

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/health"
)

// TestBriefChildHealth: wavecd's check of child apps assesses a brief
// child as it assesses the whole one, in every state it tells apart, and
// the brief one leaves out what grows with the child's objects and syncs.
func TestBriefChildHealth(t *testing.T) {
	children := readChildren(t)
	assessor, err := health.New(health.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !briefChildren(assessor) {
		t.Fatal("wavecd's check of child apps does not take brief children")
	}
	seen := map[health.Code]bool{}
	for name, app := range children {
		t.Run(name, func(t *testing.T) {
			whole, brief := convert(t, app), convert(t, briefChild(app))
			want, got := assessor.Explain(whole), assessor.Explain(brief)
			if got != want {
				t.Errorf("brief: %+v, whole: %+v", got, want)
			}
			seen[want.Status.Status] = true
			for _, field := range [][]string{
				{"status", "resources"}, {"status", "history"}, {"status", "summary", "images"}, {"status", "conditions"},
				{"status", "operationState", "syncResult"}, {"status", "operationState", "operation", "sync"},
			} {
				if _, found, _ := unstructured.NestedFieldNoCopy(brief.Object, field...); found {
					t.Errorf("the brief child keeps %v", field)
				}
			}
			if brief.GetAnnotations()[lastApplied] != whole.GetAnnotations()[lastApplied] || len(brief.GetFinalizers()) != len(whole.GetFinalizers()) {
				t.Error("the brief child lost metadata")
			}
		})
	}
	for _, code := range []health.Code{health.Healthy, health.Progressing, health.Degraded} {
		if !seen[code] {
			t.Errorf("no child in testdata/children.yaml is %s", code)
		}
	}
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestBriefChildrenOnlyForTheirOwnCheck: a health check of child apps from
// argocd-cm (Lua) reads the whole app, and so does Argo CD parity's check.
func TestBriefChildrenOnlyForTheirOwnCheck(t *testing.T) {
	tests := map[string]struct {
		opts health.Options
		want bool
	}{
		"wavecd's check":      {opts: health.Options{}, want: true},
		"Argo CD parity":      {opts: health.Options{ArgoParity: true}},
		"child health off":    {opts: health.Options{Settings: map[string]string{health.KeyApplicationHealth: "false"}}},
		"a Lua check":         {opts: health.Options{Settings: map[string]string{health.KeyHealthPrefix + "argoproj.io_Application": "hs = {}\nhs.status = obj.status.health.status\nreturn hs\n"}}},
		"a Lua check, parity": {opts: health.Options{ArgoParity: true, Settings: map[string]string{health.KeyHealthPrefix + "argoproj.io_Application": "return {status = 'Healthy'}\n"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, err := health.New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := briefChildren(a); got != tc.want {
				t.Errorf("briefChildren = %v, want %v", got, tc.want)
			}
		})
	}
	if briefChildren(nil) {
		t.Error("no assessor takes brief children")
	}
}

func readChildren(t *testing.T) map[string]*v1alpha1.Application {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "children.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1alpha1.Application{}
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		t.Fatalf("testdata/children.yaml: %v", err)
	}
	return out
}

func convert(t *testing.T, app *v1alpha1.Application) *unstructured.Unstructured {
	t.Helper()
	u, err := application.ToUnstructured(app)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
