package sync

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestSafeToStop(t *testing.T) {
	tests := map[string]struct {
		state string
		want  bool
	}{
		"waiting on a wave's objects":          {"waiting-on-wave", true},
		"a hook of the sync is running":        {"hook-running", false},
		"hook done, waiting on the wave":       {"hook-done-wave-waiting", true},
		"failing: the SyncFail hooks must run": {"failing", false},
		"a pruned object is being deleted":     {"pruning", true},
		"nothing started yet":                  {"not-started", true},
		"the sync has ended":                   {"succeeded", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "stop", tc.state+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			st := &State{}
			if err := yaml.UnmarshalStrict(data, st); err != nil {
				t.Fatalf("%s: %v", tc.state, err)
			}
			if got := safeToStop(st); got != tc.want {
				t.Errorf("safeToStop = %v, want %v", got, tc.want)
			}
		})
	}
}
