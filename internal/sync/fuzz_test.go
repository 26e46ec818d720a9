package sync

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
)

// FuzzSyncOptionsAndAnnotations parses any syncOptions list and any values
// of the annotations that steer a sync (sync-options, sync-wave, hook,
// hook-delete-policy and their Helm forms): nothing panics, and what comes
// out is one of the known values.
func FuzzSyncOptionsAndAnnotations(f *testing.F) {
	f.Add("Prune=false\nCreateNamespace=true\nPrunePropagationPolicy=orphan", "Replace=true,ServerSideApply=true", "-5", "PreSync,PostSync", "HookSucceeded", "pre-install", "1")
	f.Add("Validate=maybe", "Force=true,Replace=true", "x", "Skip", "BeforeHookCreation,HookFailed", "post-upgrade,test", "99999999999999999999")
	f.Add("=\n==\n,", ",,=,", " 3 ", "Sync, SyncFail ,", ",", "before-hook-creation", "")
	f.Fuzz(func(t *testing.T, options, objOptions, wave, hookTypes, policy, helmHook, helmWeight string) {
		o, err := ParseSyncOptions(strings.Split(options, "\n"))
		if err == nil && o.PrunePropagationPolicy != "" && !strings.Contains(options, "PrunePropagationPolicy") {
			t.Fatalf("a propagation policy %q from options without one", o.PrunePropagationPolicy)
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		obj.SetName("x")
		obj.SetAnnotations(map[string]string{
			v1alpha1.AnnotationSyncOptions: objOptions, hook.AnnotationSyncWave: wave, hook.AnnotationHook: hookTypes,
			hook.AnnotationDeletePolicy: policy, hook.AnnotationHelmHook: helmHook, hook.AnnotationHelmWeight: helmWeight,
			hook.AnnotationHelmDeletePolicy: policy,
		})
		_ = parseObjectOptions(obj)
		_ = settingsFor(o, obj, nil)
		_ = hook.Wave(obj)
		known := []hook.Type{hook.PreSync, hook.Sync, hook.PostSync, hook.SyncFail, hook.Skip, hook.PreDelete, hook.PostDelete}
		for _, p := range append(hook.SyncPhases(obj), hook.Types(obj)...) {
			if !slices.Contains(known, p) {
				t.Fatalf("unknown hook type %q", p)
			}
		}
		for _, p := range hook.DeletePolicies(obj) {
			if p != hook.HookSucceeded && p != hook.HookFailed && p != hook.BeforeHookCreation {
				t.Fatalf("unknown delete policy %q", p)
			}
		}
		if hook.IsSkipped(obj) && hook.IsHook(obj) {
			t.Fatal("an object both skipped and a hook")
		}
	})
}
