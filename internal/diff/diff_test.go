package diff

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func load(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// fixed predicts obj whatever is applied, as a stand-in for the dry run.
func fixed(obj *unstructured.Unstructured) Predictor {
	return PredictorFunc(func(context.Context, *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return obj.DeepCopy(), nil
	})
}

func TestNormalize(t *testing.T) {
	live := load(t, "live.yaml")
	got, err := Normalize(live, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(load(t, "normalized-live.yaml").Object, got.Object); diff != "" {
		t.Errorf("Normalize() (-want +got):\n%s", diff)
	}
	got.Object["spec"].(map[string]any)["replicas"] = int64(9)
	if diff := cmp.Diff(load(t, "live.yaml").Object, live.Object); diff != "" {
		t.Errorf("Normalize() or a change to its result changed its input (-want +got):\n%s", diff)
	}
}

func TestCompare(t *testing.T) {
	deployment := IgnoreRule{Group: "apps", Kind: "Deployment"}
	with := func(r IgnoreRule, f func(*IgnoreRule)) IgnoreRule { f(&r); return r }
	initContainers := with(deployment, func(r *IgnoreRule) {
		r.JQPathExpressions = []string{`.spec.template.spec.initContainers[] | select(.name == "injected")`}
	})
	tests := map[string]struct {
		rules    []IgnoreRule
		noLive   bool
		want     Status
		wantText []string
	}{
		"replicas, init container and limits differ": {
			want:     OutOfSync,
			wantText: []string{"-  replicas: 5", "+  replicas: 3", "-      - image: sidecar:1", `-            cpu: "2"`},
		},
		"missing object": {
			noLive:   true,
			want:     OutOfSync,
			wantText: []string{"+  replicas: 3"},
		},
		"every difference ignored: pointer, jq and the autoscaler's fields": {
			rules: []IgnoreRule{
				with(deployment, func(r *IgnoreRule) { r.JSONPointers = []string{"/spec/replicas"} }),
				initContainers,
				with(deployment, func(r *IgnoreRule) { r.ManagedFieldsManagers = []string{"autoscaler"} }),
			},
			want: Synced,
		},
		"managed fields alone cover replicas and limits": {
			rules:    []IgnoreRule{initContainers, with(deployment, func(r *IgnoreRule) { r.ManagedFieldsManagers = []string{"autoscaler"} })},
			want:     Synced,
			wantText: nil,
		},
		"a rule for another kind does not apply": {
			rules:    []IgnoreRule{{Kind: "StatefulSet", JSONPointers: []string{"/spec/replicas"}}},
			want:     OutOfSync,
			wantText: []string{"+  replicas: 3"},
		},
		"a rule for another name does not apply": {
			rules:    []IgnoreRule{with(deployment, func(r *IgnoreRule) { r.Name = "api"; r.JSONPointers = []string{"/spec/replicas"} })},
			want:     OutOfSync,
			wantText: []string{"+  replicas: 3"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := load(t, "live.yaml")
			if tc.noLive {
				live = nil
			}
			predicted := load(t, "predicted.yaml")
			res, err := Compare(t.Context(), predicted, live, Options{Predictor: fixed(predicted), Ignore: tc.rules})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "" {
				t.Errorf("Compare() wrote a text: %q", res.Text)
			}
			if res, err = res.WithText(); err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.want || res.Missing != tc.noLive {
				t.Errorf("Compare() = %s (missing %v), want %s (missing %v)\n%s", res.Status, res.Missing, tc.want, tc.noLive, res.Text)
			}
			for _, line := range tc.wantText {
				if !strings.Contains(res.Text, line) {
					t.Errorf("diff text lacks %q:\n%s", line, res.Text)
				}
			}
			if tc.want == Synced && res.Text != "" {
				t.Errorf("diff text of a synced object = %q, want empty", res.Text)
			}
		})
	}
}

func TestExtra(t *testing.T) {
	res, err := Extra(load(t, "live.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err = res.WithText(); err != nil {
		t.Fatal(err)
	}
	if !res.Extra || res.Status != OutOfSync || !strings.Contains(res.Text, "-  replicas: 5") {
		t.Errorf("Extra() = %+v", res)
	}
}

func TestRespectIgnored(t *testing.T) {
	tests := map[string]struct {
		rule IgnoreRule
		want func(desired *unstructured.Unstructured)
	}{
		"json pointer keeps the live value": {
			rule: IgnoreRule{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
			want: func(d *unstructured.Unstructured) { d.Object["spec"].(map[string]any)["replicas"] = float64(5) },
		},
		"jq path keeps a live list element": {
			rule: IgnoreRule{Kind: "Deployment", JQPathExpressions: []string{".spec.template.spec.initContainers"}},
			want: func(d *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(d.Object, []any{map[string]any{"name": "injected", "image": "sidecar:1"}},
					"spec", "template", "spec", "initContainers")
			},
		},
		"a field absent live is removed": {
			rule: IgnoreRule{Kind: "Deployment", JSONPointers: []string{"/metadata/annotations"}},
			want: func(d *unstructured.Unstructured) {
				d.SetAnnotations(map[string]string{
					"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"apps/v1"}`,
					"argocd.argoproj.io/tracking-id":                   "shop:apps/Deployment:shop/web",
				})
			},
		},
		"another kind's rule changes nothing": {
			rule: IgnoreRule{Kind: "StatefulSet", JSONPointers: []string{"/spec/replicas"}},
			want: func(*unstructured.Unstructured) {},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			desired := load(t, "predicted.yaml")
			want := desired.DeepCopy()
			tc.want(want)
			got, err := RespectIgnored(desired, load(t, "live.yaml"), []IgnoreRule{tc.rule})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("RespectIgnored() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIgnoreErrors(t *testing.T) {
	tests := map[string]IgnoreRule{
		"pointer without a slash": {JSONPointers: []string{"spec/replicas"}},
		"bad jq":                  {JQPathExpressions: []string{".spec[["}},
		"jq that never ends":      {JQPathExpressions: []string{"repeat(.)"}},
	}
	for name, rule := range tests {
		t.Run(name, func(t *testing.T) {
			obj := load(t, "live.yaml")
			_, err := Normalize(obj, obj, []IgnoreRule{rule})
			if err == nil {
				t.Error("Normalize() succeeded, want an error")
			}
			t.Log(err)
		})
	}
}

// BenchmarkJQRule normalizes a child Application with the rule every
// parent's comparison applies to its children (the deletion-hook
// finalizers): the program is compiled once, not on each run.
func BenchmarkJQRule(b *testing.B) {
	obj := load(b, "live.yaml")
	rule := IgnoreRule{JQPathExpressions: []string{`.metadata.finalizers[]? | select(. == "a" or . == "b")`}}
	for b.Loop() {
		if _, err := Normalize(obj, obj, []IgnoreRule{rule}); err != nil {
			b.Fatal(err)
		}
	}
}
