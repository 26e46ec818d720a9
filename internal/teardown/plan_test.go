package teardown

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/testenv"
)

// planCase is one file of testdata/plan: an app's live objects, the
// options of the plan, and the steps and kept objects it must give, each
// object named as describe names it.
type planCase struct {
	Description string           `json:"description"`
	Options     Options          `json:"options"`
	Objects     []map[string]any `json:"objects"`
	Steps       []wantStep       `json:"steps"`
	Kept        []string         `json:"kept"`
}

type wantStep struct {
	Name    string   `json:"name"`
	Objects []string `json:"objects"`
}

func TestNewPlan(t *testing.T) {
	testenv.EachFixture(t, "plan", func(t *testing.T, tc *planCase) {
		plan := NewPlan(objects(tc.Objects), tc.Options)
		var steps []wantStep
		for _, s := range plan.Steps {
			names := make([]string, 0, len(s.Objects))
			for _, o := range s.Objects {
				names = append(names, describe(o))
			}
			steps = append(steps, wantStep{Name: s.Name, Objects: names})
		}
		var kept []string
		for _, k := range plan.Kept {
			kept = append(kept, describe(k.Object)+": "+k.Reason)
		}
		if diff := cmp.Diff(tc.Steps, steps); diff != "" {
			t.Errorf("%s: steps (-want +got):\n%s", tc.Description, diff)
		}
		if diff := cmp.Diff(tc.Kept, kept); diff != "" {
			t.Errorf("%s: kept (-want +got):\n%s", tc.Description, diff)
		}
	})
}

func objects(raw []map[string]any) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(raw))
	for _, o := range raw {
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return out
}
