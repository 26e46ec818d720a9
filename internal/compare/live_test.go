package compare

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/kube"
)

// TestNewest: a sync's own writes stand in for cached copies the watch has
// not brought yet, never for newer ones, and never for objects the app
// does not track.
func TestNewest(t *testing.T) {
	tracking := kube.Tracking{Method: kube.TrackingAnnotation, AppName: "web"}
	obj := func(name, rv string, tracked bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		if tracked {
			tracking.Set(u)
		}
		return u
	}
	live := []*unstructured.Unstructured{obj("stale", "5", true), obj("fresh", "9", true)}
	applied := []*unstructured.Unstructured{
		obj("stale", "7", true), obj("fresh", "8", true), obj("new", "6", true), obj("foreign", "4", false),
	}
	got := map[string]string{}
	for _, o := range newest(live, applied, tracking) {
		got[o.GetName()] = o.GetResourceVersion()
	}
	want := map[string]string{"stale": "7", "fresh": "9", "new": "6"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, rv := range want {
		if got[name] != rv {
			t.Errorf("%s at version %s, want %s", name, got[name], rv)
		}
	}
}
