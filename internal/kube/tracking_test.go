package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(apiVersion, kind, namespace, name string, annotations, labels map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetAnnotations(annotations)
	obj.SetLabels(labels)
	return obj
}

func TestTrackingSet(t *testing.T) {
	tests := map[string]struct {
		tracking        Tracking
		obj             *unstructured.Unstructured
		wantAnnotations map[string]string
		wantLabels      map[string]string
	}{
		"annotation by default": {
			tracking:        Tracking{AppName: "guestbook"},
			obj:             object("apps/v1", "Deployment", "web", "ui", nil, nil),
			wantAnnotations: map[string]string{AnnotationTrackingID: "guestbook:apps/Deployment:web/ui"},
		},
		"cluster-scoped object has an empty namespace": {
			tracking:        Tracking{AppName: "guestbook"},
			obj:             object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader", map[string]string{"keep": "me"}, nil),
			wantAnnotations: map[string]string{"keep": "me", AnnotationTrackingID: "guestbook:rbac.authorization.k8s.io/ClusterRole:/reader"},
		},
		"label": {
			tracking:   Tracking{Method: TrackingLabel, AppName: "guestbook"},
			obj:        object("v1", "ConfigMap", "web", "c", nil, nil),
			wantLabels: map[string]string{LabelInstance: "guestbook"},
		},
		"annotation and label": {
			tracking:        Tracking{Method: TrackingAnnotationAndLabel, AppName: "guestbook"},
			obj:             object("v1", "ConfigMap", "web", "c", nil, nil),
			wantAnnotations: map[string]string{AnnotationTrackingID: "guestbook:/ConfigMap:web/c"},
			wantLabels:      map[string]string{LabelInstance: "guestbook"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.tracking.Set(tc.obj)
			if diff := cmp.Diff(tc.wantAnnotations, tc.obj.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, tc.obj.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if !tc.tracking.Tracks(tc.obj) {
				t.Error("Tracks() = false after Set")
			}
		})
	}
}

func TestTrackingOwner(t *testing.T) {
	id := func(v string) map[string]string { return map[string]string{AnnotationTrackingID: v} }
	tests := map[string]struct {
		tracking Tracking
		obj      *unstructured.Unstructured
		want     string
	}{
		"its own id": {
			tracking: Tracking{AppName: "a"},
			obj:      object("v1", "ConfigMap", "ns", "c", id("b:/ConfigMap:ns/c"), nil),
			want:     "b",
		},
		"a copied id names another object": {
			tracking: Tracking{AppName: "a"},
			obj:      object("v1", "ConfigMap", "ns", "copy", id("a:/ConfigMap:ns/c"), nil),
		},
		"another kind": {
			tracking: Tracking{AppName: "a"},
			obj:      object("v1", "Secret", "ns", "c", id("a:/ConfigMap:ns/c"), nil),
		},
		"malformed id": {
			tracking: Tracking{AppName: "a"},
			obj:      object("v1", "ConfigMap", "ns", "c", id("nonsense"), nil),
		},
		"label tracking reads the label only": {
			tracking: Tracking{Method: TrackingLabel, AppName: "a"},
			obj:      object("v1", "ConfigMap", "ns", "c", id("b:/ConfigMap:ns/c"), map[string]string{LabelInstance: "a"}),
			want:     "a",
		},
		"untracked": {
			tracking: Tracking{AppName: "a"},
			obj:      object("v1", "ConfigMap", "ns", "c", nil, nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.tracking.Owner(tc.obj); got != tc.want {
				t.Errorf("Owner() = %q, want %q", got, tc.want)
			}
		})
	}
}
