package sync

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzSyncOptionsAndAnnotations parses any syncOptions list and any values
// of the annotations that steer a sync (sync-options, sync-wave, hook,
// hook-delete-policy and their Helm forms): nothing panics, and what comes
// out is one of the known values.
func FuzzSyncOptionsAndAnnotations(f *testing.F) {
	f.Add("Prune=false\nCreateNamespace=true\nPrunePropagationPolicy=orphan", "Replace=true,ServerSideApply=true", "-5", "PreSync,PostSync", "HookSucceeded", "pre-install", "1")
	f.Add("Validate=maybe", "Force=true,Replace=true", "x", "Skip", "BeforeHookCreation,HookFailed", "post-upgrade,test", "99999999999999999999")
	f.Add("=\n==\n,", ",,=,", " 3 ", "Sync, SyncFail ,", ",", "before-hook-creation", "")
	f.Fuzz(func(t *testing.T, options, objOptions, wave, hook, policy, helmHook, helmWeight string) {
		o, err := ParseSyncOptions(strings.Split(options, "\n"))
		if err == nil && o.PrunePropagationPolicy != "" && !strings.Contains(options, "PrunePropagationPolicy") {
			t.Fatalf("a propagation policy %q from options without one", o.PrunePropagationPolicy)
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		obj.SetName("x")
		obj.SetAnnotations(map[string]string{
			AnnotationSyncOptions: objOptions, AnnotationSyncWave: wave, AnnotationHook: hook,
			AnnotationHookDeletePolicy: policy, annotationHelmHook: helmHook, annotationHelmWeight: helmWeight,
			annotationHelmDeletePolicy: policy,
		})
		_ = parseObjectOptions(obj)
		_ = settingsFor(o, obj, nil)
		_ = waveOf(obj)
		for _, p := range hookPhases(obj) {
			if p != PhasePreSync && p != PhaseSync && p != PhasePostSync && p != PhaseSyncFail {
				t.Fatalf("unknown hook phase %q", p)
			}
		}
		for _, p := range deletePolicies(obj) {
			if p != HookSucceeded && p != HookFailed && p != BeforeHookCreation {
				t.Fatalf("unknown delete policy %q", p)
			}
		}
		if isSkipped(obj) && isHook(obj) {
			t.Fatal("an object both skipped and a hook")
		}
	})
}
