package diff

import "testing"

func TestReadsManagedFields(t *testing.T) {
	tests := map[string]struct {
		rules []IgnoreRule
		want  bool
	}{
		"no rules":                {},
		"pointers and jq only":    {rules: []IgnoreRule{{JSONPointers: []string{"/data"}}, {JQPathExpressions: []string{".spec.replicas"}}}},
		"one rule names managers": {rules: []IgnoreRule{{JSONPointers: []string{"/data"}}, {Kind: "Deployment", ManagedFieldsManagers: []string{"kube-controller-manager"}}}, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ReadsManagedFields(tc.rules); got != tc.want {
				t.Errorf("ReadsManagedFields = %v, want %v", got, tc.want)
			}
		})
	}
}
