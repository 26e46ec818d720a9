package rehearsal

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTroubleCondition: a condition reading trouble with a message is
// reported; healthy ones and silent ones are not.
func TestTroubleCondition(t *testing.T) {
	cond := func(typ, status, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": msg}
	}
	for name, tc := range map[string]struct {
		conds []any
		want  string
	}{
		"degraded": {conds: []any{cond("Ready", "True", ""), cond("Degraded", "True", "Error creating / updating resource: failed calling webhook")},
			want: "Degraded=True: Error creating / updating resource: failed calling webhook"},
		"not ready":               {conds: []any{cond("Ready", "False", "waiting for calico-node")}, want: "Ready=False: waiting for calico-node"},
		"not available":           {conds: []any{cond("Available", "False", "no endpoints")}, want: "Available=False: no endpoints"},
		"healthy":                 {conds: []any{cond("Ready", "True", "all good"), cond("Degraded", "False", "")}},
		"trouble without message": {conds: []any{cond("Degraded", "True", " ")}},
		"no conditions":           {},
	} {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": tc.conds}}}
			if got := troubleCondition(obj); got != tc.want {
				t.Errorf("troubleCondition = %q, want %q", got, tc.want)
			}
		})
	}
}
