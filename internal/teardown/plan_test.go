package teardown

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// planCase is one case of testdata/plan.yaml: an app's live objects, the
// options of the plan, and the steps and kept objects it must give, each
// object named as describe names it.
type planCase struct {
	Options Options          `json:"options"`
	Objects []map[string]any `json:"objects"`
	Steps   []wantStep       `json:"steps"`
	Kept    []string         `json:"kept"`
}

type wantStep struct {
	Name    string   `json:"name"`
	Objects []string `json:"objects"`
}

func TestNewPlan(t *testing.T) {
	data, err := os.ReadFile("testdata/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]planCase{}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatalf("testdata/plan.yaml: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			live := make([]*unstructured.Unstructured, 0, len(tc.Objects))
			for _, o := range tc.Objects {
				live = append(live, &unstructured.Unstructured{Object: o})
			}
			plan := NewPlan(live, tc.Options)
			var steps []wantStep
			for _, s := range plan.Steps {
				steps = append(steps, wantStep{Name: s.Name, Objects: describeAll(s.Objects)})
			}
			var kept []string
			for _, k := range plan.Kept {
				kept = append(kept, describe(k.Object)+": "+k.Reason)
			}
			if diff := cmp.Diff(tc.Steps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Kept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

func describeAll(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, describe(o))
	}
	return out
}
