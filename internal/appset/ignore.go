package appset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
)

// keepIgnored makes the fields the set's ignoreApplicationDifferences
// rules name in want (the app as generated, a JSON tree) equal to live's:
// live's value where live has the field, no field where it has none. So
// users may change those fields and the set leaves them alone. Rules with
// a name apply to that app only. The fields are resolved as the
// Application controller resolves ignoreDifferences (diff.RespectIgnored).
func keepIgnored(rules []v1alpha1.ApplicationSetResourceIgnoreDifferences, name string, live, want any) (any, error) {
	var apply []diff.IgnoreRule
	for _, rule := range rules {
		if rule.Name == "" || rule.Name == name {
			apply = append(apply, diff.IgnoreRule{JSONPointers: rule.JSONPointers, JQPathExpressions: rule.JQPathExpressions})
		}
	}
	liveObj, liveOK := live.(map[string]any)
	wantObj, wantOK := want.(map[string]any)
	if len(apply) == 0 || !liveOK || !wantOK {
		return want, nil
	}
	out, err := diff.RespectIgnored(&unstructured.Unstructured{Object: wantObj}, &unstructured.Unstructured{Object: liveObj}, apply)
	if err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: %w", err)
	}
	return out.Object, nil
}
