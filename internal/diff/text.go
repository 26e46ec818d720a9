package diff

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// unified returns a unified diff of the YAML of live and predicted, either
// of which may be nil.
func unified(live, predicted *unstructured.Unstructured) (string, error) {
	from, err := toYAML(live)
	if err != nil {
		return "", err
	}
	to, err := toYAML(predicted)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(from),
		B:        difflib.SplitLines(to),
		FromFile: "live",
		ToFile:   "desired",
		Context:  3,
	})
}

func toYAML(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("encode yaml: %w", err)
	}
	return string(b), nil
}
