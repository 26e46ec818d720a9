package hook

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

type hookCase struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
	Hook        bool              `json:"hook"`
	Skipped     bool              `json:"skipped"`
	Types       []Type            `json:"types"`
	Phases      []Type            `json:"phases"`
	Policies    []DeletePolicy    `json:"policies"`
	Wave        int               `json:"wave"`
}

func TestAnnotations(t *testing.T) {
	data, err := os.ReadFile("testdata/hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []hookCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	empty := cmpopts.EquateEmpty()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			obj.SetAnnotations(c.Annotations)
			if got := IsHook(obj); got != c.Hook {
				t.Errorf("IsHook = %v, want %v", got, c.Hook)
			}
			if got := IsSkipped(obj); got != c.Skipped {
				t.Errorf("IsSkipped = %v, want %v", got, c.Skipped)
			}
			if diff := cmp.Diff(c.Types, Types(obj), empty); diff != "" {
				t.Errorf("Types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.Phases, SyncPhases(obj), empty); diff != "" {
				t.Errorf("SyncPhases (-want +got):\n%s", diff)
			}
			if c.Policies != nil {
				if diff := cmp.Diff(c.Policies, DeletePolicies(obj)); diff != "" {
					t.Errorf("DeletePolicies (-want +got):\n%s", diff)
				}
			}
			if got := Wave(obj); got != c.Wave {
				t.Errorf("Wave = %d, want %d", got, c.Wave)
			}
			// A typed object (an Application) answers the same as an
			// unstructured one, whose annotations are read in place.
			typed := &metav1.ObjectMeta{Annotations: c.Annotations}
			if IsHook(typed) != c.Hook || Wave(typed) != c.Wave || !cmp.Equal(c.Types, Types(typed), empty) {
				t.Errorf("typed object: IsHook %v, Wave %d, Types %v; want %v, %d, %v", IsHook(typed), Wave(typed), Types(typed), c.Hook, c.Wave, c.Types)
			}
		})
	}
}
