package teardown

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// progressCase is one case of testdata/progress.yaml: the objects a step
// waits on, and what Message and Stalled (at now, with a 2-minute stall
// timeout) say.
type progressCase struct {
	Step    string           `json:"step"`
	Now     time.Time        `json:"now"`
	Waiting []map[string]any `json:"waiting"`
	Message string           `json:"message"`
	Stalled string           `json:"stalled"`
}

func TestProgressMessages(t *testing.T) {
	data, err := os.ReadFile("testdata/progress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]progressCase{}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatalf("testdata/progress.yaml: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Progress{Step: tc.Step, Index: 1, Steps: 3}
			for _, o := range tc.Waiting {
				p.Waiting = append(p.Waiting, &unstructured.Unstructured{Object: o})
			}
			if diff := cmp.Diff(tc.Message, p.Message()); diff != "" {
				t.Errorf("Message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Stalled, p.Stalled(tc.Now, 2*time.Minute)); diff != "" {
				t.Errorf("Stalled (-want +got):\n%s", diff)
			}
		})
	}
}
