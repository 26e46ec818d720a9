package compare

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/kube"
)

// TestMemo: a memoized outcome answers only a comparison of the same app,
// spec, annotations, settings, destination, revisions and live objects at
// the same versions; apps whose health reads Service endpoints are never
// memoized.
func TestMemo(t *testing.T) {
	settings, err := ParseSettings(nil, SettingsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	otherSettings := settings
	target := &destination.Target{Kube: &kube.Cluster{}}
	obj := func(kind, name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	webhook := obj("ValidatingWebhookConfiguration", "check", "3")
	webhook.SetAPIVersion("admissionregistration.k8s.io/v1")
	webhook.Object["webhooks"] = []any{map[string]any{"name": "w", "clientConfig": map[string]any{
		"service": map[string]any{"namespace": "ns", "name": "hook"}}}}
	child := &v1alpha1.Application{}
	child.Namespace, child.Name, child.ResourceVersion = "argocd", "child", "4"
	converted, err := application.ToUnstructured(child)
	if err != nil {
		t.Fatal(err)
	}
	base := func() memoInputs {
		app := &v1alpha1.Application{}
		app.Namespace, app.Name, app.UID = "argocd", "web", "uid-1"
		app.Annotations = map[string]string{"a": "1"}
		app.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://example.com/repo.git", Path: "web"}
		app.Status.History = v1alpha1.RevisionHistories{{ID: 1}}
		return memoInputs{app: app, settings: &settings, target: target, cmp: &Comparison{
			Revisions: []string{"aaa"}, Live: []*unstructured.Unstructured{obj("ConfigMap", "a", "1"), obj("Secret", "b", "2"), converted},
		}}
	}
	tests := map[string]struct {
		change func(in *memoInputs)
		hit    bool
	}{
		"nothing changed":               {change: func(*memoInputs) {}, hit: true},
		"live objects in another order": {change: func(in *memoInputs) { slices.Reverse(in.cmp.Live) }, hit: true},
		"a child Application not converted yet": {change: func(in *memoInputs) {
			in.cmp.Live, in.cmp.children = in.cmp.Live[:2], []*v1alpha1.Application{child}
		}, hit: true},
		"a child Application's version": {change: func(in *memoInputs) {
			newer := child.DeepCopy()
			newer.ResourceVersion = "6"
			in.cmp.Live, in.cmp.children = in.cmp.Live[:2], []*v1alpha1.Application{newer}
		}},
		"a live object's version": {change: func(in *memoInputs) { in.cmp.Live[1].SetResourceVersion("5") }},
		"a live object more":      {change: func(in *memoInputs) { in.cmp.Live = append(in.cmp.Live, obj("ConfigMap", "c", "1")) }},
		"a live object less":      {change: func(in *memoInputs) { in.cmp.Live = in.cmp.Live[:1] }},
		"the revision":            {change: func(in *memoInputs) { in.cmp.Revisions = []string{"bbb"} }},
		"an annotation":           {change: func(in *memoInputs) { in.app.Annotations["a"] = "2" }},
		"the spec":                {change: func(in *memoInputs) { in.app.Spec.Source.Path = "api" }},
		"the app recreated":       {change: func(in *memoInputs) { in.app.UID = "uid-2" }},
		"never synced since":      {change: func(in *memoInputs) { in.app.Status.History = nil }},
		"the settings":            {change: func(in *memoInputs) { in.settings = &otherSettings }},
		"the destination":         {change: func(in *memoInputs) { in.target = &destination.Target{Kube: &kube.Cluster{}} }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var m memo
			first := base()
			first.cmp.Resources = []v1alpha1.ResourceStatus{{Kind: "ConfigMap", Name: "a", Status: v1alpha1.SyncStatusCodeSynced}}
			first.cmp.Sync = v1alpha1.SyncStatusCodeSynced
			m.put(first)
			first.cmp.Resources[0].Name = "changed after"
			in := base()
			tc.change(&in)
			key, ok := keyOf(in)
			if !ok {
				t.Fatal("not memoized")
			}
			e, hit := m.get(in, key)
			if hit != tc.hit {
				t.Fatalf("hit = %v, want %v", hit, tc.hit)
			}
			if !hit {
				return
			}
			e.outcome(in.cmp)
			if !in.cmp.Memoized || in.cmp.Sync != v1alpha1.SyncStatusCodeSynced || len(in.cmp.Resources) != 1 || in.cmp.Resources[0].Name != "a" {
				t.Errorf("outcome: memoized %v, sync %s, resources %v", in.cmp.Memoized, in.cmp.Sync, in.cmp.Resources)
			}
		})
	}

	t.Run("readiness gates", func(t *testing.T) {
		in := base()
		in.cmp.Live = append(in.cmp.Live, webhook)
		if len(gatedServices(in.settings, in.cmp.Live)) == 0 {
			t.Fatal("the webhook configuration gates nothing")
		}
		if _, ok := keyOf(in); ok {
			t.Error("an app whose health waits on endpoints was memoized")
		}
	})
}
