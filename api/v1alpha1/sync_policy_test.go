package v1alpha1

import "testing"

// TestSyncOptions: one reading of sync options for every reader: keys and
// values trimmed, the last one set wins, an object's from its annotation.
func TestSyncOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opts       SyncOptions
		key, value string
		set        bool
	}{
		"set":            {opts: SyncOptions{"ServerSideApply=true"}, key: "ServerSideApply", value: "true", set: true},
		"spaces":         {opts: SyncOptions{" Prune = false "}, key: "Prune", value: "false", set: true},
		"the last wins":  {opts: SyncOptions{"Prune=false", "Prune=true"}, key: "Prune", value: "true", set: true},
		"not set":        {opts: SyncOptions{"PruneLast=true"}, key: "Prune"},
		"a key alone":    {opts: SyncOptions{"Prune"}, key: "Prune"},
		"from an object": {opts: ObjectSyncOptions(map[string]string{AnnotationSyncOptions: "Delete=false,Replace=true"}), key: "Replace", value: "true", set: true},
		"no annotation":  {opts: ObjectSyncOptions(nil), key: "Delete"},
	} {
		t.Run(name, func(t *testing.T) {
			v, set := tc.opts.Option(tc.key)
			if v != tc.value || set != tc.set {
				t.Errorf("Option(%q) = %q, %v; want %q, %v", tc.key, v, set, tc.value, tc.set)
			}
			if tc.set && !tc.opts.OptionIs(tc.key, tc.value) {
				t.Errorf("OptionIs(%q, %q) = false", tc.key, tc.value)
			}
		})
	}
}
