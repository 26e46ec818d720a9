package appstatus

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestMergePatch checks the status patch against controller-runtime's
// merge patch of the decoded documents, for the changes a controller
// makes to an app.
func TestMergePatch(t *testing.T) {
	base := syncedApp(t)
	at := metav1.NewTime(time.Date(2026, 11, 27, 10, 8, 0, 0, time.UTC))
	tests := map[string]func(a *v1alpha1.Application){
		"nothing":         func(*v1alpha1.Application) {},
		"timestamps only": func(a *v1alpha1.Application) { a.Status.ReconciledAt, a.Status.ObservedAt = &at, &at },
		"health": func(a *v1alpha1.Application) {
			a.Status.Health.Status = "Degraded"
			a.Status.Health.Message = "pod crashed"
		},
		"a new condition": func(a *v1alpha1.Application) {
			a.Status.Conditions = append(a.Status.Conditions, v1alpha1.ApplicationCondition{Type: "SyncError", Message: "failed", LastTransitionTime: &at})
		},
		"the summary emptied":      func(a *v1alpha1.Application) { a.Status.Summary = v1alpha1.ApplicationSummary{} },
		"one resource out of sync": func(a *v1alpha1.Application) { a.Status.Resources[1].Status = "OutOfSync" },
		"a resource removed":       func(a *v1alpha1.Application) { a.Status.Resources = a.Status.Resources[:1] },
		"the compared path":        func(a *v1alpha1.Application) { a.Status.Sync.ComparedTo.Source.Path = "guestbook-v2" },
		"an annotation removed":    func(a *v1alpha1.Application) { delete(a.Annotations, "argocd.argoproj.io/sync-wave") },
		"all annotations removed":  func(a *v1alpha1.Application) { a.Annotations = nil },
		"a label added":            func(a *v1alpha1.Application) { a.Labels["tier"] = "frontend" },
		"the finalizer removed":    func(a *v1alpha1.Application) { a.Finalizers = nil },
		"an operation requested": func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "main"}}
		},
		"the operation state gone": func(a *v1alpha1.Application) { a.Status.OperationState = nil },
		"a running operation": func(a *v1alpha1.Application) {
			a.Status.OperationState = &v1alpha1.OperationState{Phase: "Running", StartedAt: at}
		},
		"a history entry": func(a *v1alpha1.Application) {
			a.Status.History = append(a.Status.History, v1alpha1.RevisionHistory{ID: 9, DeployedAt: at})
		},
		"a field of a nested object": func(a *v1alpha1.Application) { a.Status.Health.LastTransitionTime = nil },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			app := base.DeepCopy()
			change(app)
			checkMergePatch(t, base, app)
		})
	}
}

// TestMergePatchRoot: a root's status of many resources, where one
// child's health changed, is patched with the whole list (a merge patch
// replaces lists), as the patch of decoded documents does.
func TestMergePatchRoot(t *testing.T) {
	base := rootApp(t, 500)
	app := base.DeepCopy()
	app.Status.Resources[250].Health = &v1alpha1.HealthStatus{Status: "Degraded"}
	checkMergePatch(t, base, app)
}

// checkMergePatch compares the patch from base to app with
// controller-runtime's.
func checkMergePatch(t *testing.T, base, app *v1alpha1.Application) {
	t.Helper()
	got, err := mergePatch(base, app)
	if err != nil {
		t.Fatal(err)
	}
	want, err := client.MergeFrom(base).Data(app)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, got, want) {
		t.Errorf("patch\n%.2000s\nwant\n%.2000s", got, want)
	}
}

// BenchmarkMergePatchRoot is a root of 5,000 children's status write after
// one child's health changed.
func BenchmarkMergePatchRoot(b *testing.B) {
	base := rootApp(b, 5000)
	app := base.DeepCopy()
	app.Status.Resources[2500].Health = &v1alpha1.HealthStatus{Status: "Degraded"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mergePatch(base, app); err != nil {
			b.Fatal(err)
		}
	}
}

func syncedApp(t testing.TB) *v1alpha1.Application {
	t.Helper()
	raw, err := os.ReadFile("testdata/synced-app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := yaml.UnmarshalStrict(raw, app); err != nil {
		t.Fatalf("testdata/synced-app.yaml: %v", err)
	}
	return app
}

// rootApp is the synced app as the root of n healthy child apps.
func rootApp(t testing.TB, n int) *v1alpha1.Application {
	app := syncedApp(t)
	app.Status.Resources = nil
	for i := range n {
		app.Status.Resources = append(app.Status.Resources, v1alpha1.ResourceStatus{
			Group: "argoproj.io", Version: "v1alpha1", Kind: "Application", Namespace: "argocd", Name: fmt.Sprintf("app-%04d", i),
			Status: "Synced", Health: &v1alpha1.HealthStatus{Status: "Healthy"},
		})
	}
	return app
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestObjectMergePatch checks the byte-level patch against the merge patch
// of decoded documents (json-patch's) on JSON that trips a scanner:
// quotes, braces and brackets inside strings, escapes, nested lists and
// objects, nulls, empty objects and lists.
func TestObjectMergePatch(t *testing.T) {
	tests := map[string]struct{ orig, mod string }{
		"same":                       {`{"a":1,"b":"x"}`, `{"a":1,"b":"x"}`},
		"empty objects":              {`{}`, `{}`},
		"a member added":             {`{}`, `{"a":{"b":[1,{"c":null}]}}`},
		"a member removed":           {`{"a":1,"b":{"c":2}}`, `{"a":1}`},
		"a scalar changed":           {`{"a":1,"b":true}`, `{"a":2,"b":false}`},
		"to null":                    {`{"a":{"b":1}}`, `{"a":null}`},
		"from null":                  {`{"a":null}`, `{"a":{"b":1}}`},
		"strings with syntax":        {`{"m":"a \"quoted\" {brace} [list], comma: yes","n":"}"}`, `{"m":"a \"quoted\" {brace} [list], comma: no","n":"}"}`},
		"escapes":                    {`{"m":"back\\\\slash\\\"","u":"\u003cb\u003e"}`, `{"m":"back\\\\slash","u":"\u003cb\u003e"}`},
		"an escaped key":             {`{"k\"ey":1,"x":2}`, `{"k\"ey":2,"x":2}`},
		"nested object":              {`{"s":{"a":{"b":{"c":1,"d":2}},"e":[1]}}`, `{"s":{"a":{"b":{"c":1,"d":3}},"e":[1]}}`},
		"nested member removed":      {`{"s":{"a":{"b":1,"c":2}}}`, `{"s":{"a":{"b":1}}}`},
		"nested object unchanged":    {`{"s":{"a":{"b":1}},"t":1}`, `{"s":{"a":{"b":1}},"t":2}`},
		"a list changed":             {`{"l":[{"a":1},{"a":2}]}`, `{"l":[{"a":1},{"a":3}]}`},
		"a list emptied":             {`{"l":[1,2]}`, `{"l":[]}`},
		"an object emptied":          {`{"o":{"a":1}}`, `{"o":{}}`},
		"an empty object added":      {`{"a":1}`, `{"a":1,"o":{}}`},
		"an empty object for null":   {`{"o":null}`, `{"o":{}}`},
		"an empty object for a list": {`{"o":[1]}`, `{"o":{}}`},
		"list of lists and braces":   {`{"l":[[1,[2]],"]"],"o":{"x":"{"}}`, `{"l":[[1,[2]],"]"],"o":{"x":"}"}}`},
		"numbers":                    {`{"n":1.5e10,"m":-3}`, `{"n":1.5e11,"m":-3}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := objectMergePatch([]byte(tc.orig), []byte(tc.mod))
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonpatch.CreateMergePatch([]byte(tc.orig), []byte(tc.mod))
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, out, want) {
				t.Errorf("patch %s, want %s", out, want)
			}
			// Applied, it makes what json-patch's makes (the modified
			// document, but for members set to null: a merge patch
			// removes those).
			applied, err := jsonpatch.MergePatch([]byte(tc.orig), out)
			if err != nil {
				t.Fatal(err)
			}
			wantApplied, err := jsonpatch.MergePatch([]byte(tc.orig), want)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, applied, wantApplied) {
				t.Errorf("the patch makes %s of the original, want %s", applied, wantApplied)
			}
		})
	}
}

func TestObjectMergePatchRefusesWhatItCannotRead(t *testing.T) {
	for _, doc := range []string{``, `[]`, `"a"`, `{"a":1`, `{"a"}`, `{"a":"unterminated}`, `{a:1}`, `{"a":[1,2}`} {
		if out, err := objectMergePatch([]byte(doc), []byte(`{}`)); err == nil {
			t.Errorf("%q: no error, patch %s", doc, out)
		}
	}
}
