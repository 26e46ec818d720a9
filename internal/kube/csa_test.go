package kube

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestThreeWayPatch(t *testing.T) {
	configMap := func(data map[string]any, lastApplied string) *unstructured.Unstructured {
		obj := object("v1", "ConfigMap", "ns", "c", nil, nil)
		obj.Object["data"] = data
		if lastApplied != "" {
			obj.SetAnnotations(map[string]string{AnnotationLastApplied: lastApplied})
		}
		return obj
	}
	widget := object("example.com/v1", "Widget", "ns", "w", nil, nil)
	widget.Object["spec"] = map[string]any{"size": int64(2)}
	liveWidget := object("example.com/v1", "Widget", "ns", "w", map[string]string{AnnotationLastApplied: `{"spec":{"size":1,"color":"red"}}`}, nil)
	liveWidget.Object["spec"] = map[string]any{"size": int64(1), "color": "red", "owner": "someone-else"}

	tests := map[string]struct {
		desired, live *unstructured.Unstructured
		wantType      types.PatchType
		want          map[string]any
	}{
		"a key removed since the last apply is removed": {
			desired:  configMap(map[string]any{"a": "1"}, ""),
			live:     configMap(map[string]any{"a": "1", "b": "2", "theirs": "x"}, `{"data":{"a":"1","b":"2"}}`),
			wantType: types.StrategicMergePatchType,
			want:     map[string]any{"data": map[string]any{"b": nil}},
		},
		"no last-applied: nothing is removed": {
			desired:  configMap(map[string]any{"a": "1"}, ""),
			live:     configMap(map[string]any{"a": "1", "b": "2"}, ""),
			wantType: types.StrategicMergePatchType,
			want:     map[string]any{},
		},
		"custom resources get a JSON merge patch": {
			desired:  widget,
			live:     liveWidget,
			wantType: types.MergePatchType,
			want:     map[string]any{"spec": map[string]any{"size": float64(2), "color": nil}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			modified, err := withLastApplied(tc.desired)
			if err != nil {
				t.Fatal(err)
			}
			patch, typ, err := threeWayPatch(modified, tc.live)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(patch, &got); err != nil {
				t.Fatal(err)
			}
			// The patch always records the new last-applied configuration.
			if metadata, ok := got["metadata"].(map[string]any); ok {
				delete(metadata["annotations"].(map[string]any), AnnotationLastApplied)
				if len(metadata["annotations"].(map[string]any)) == 0 {
					delete(got, "metadata")
				}
			}
			if typ != tc.wantType {
				t.Errorf("patch type = %s, want %s", typ, tc.wantType)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectError(t *testing.T) {
	cause := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "c")
	err := objectError("apply", Ref{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "ns", Name: "web"}, cause)
	if got, want := err.Error(), `apply apps/Deployment ns/web: configmaps "c" not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var oe *ObjectError
	if !errors.As(err, &oe) || oe.Name != "web" || !apierrors.IsNotFound(err) {
		t.Errorf("error %v does not carry the object and its cause", err)
	}
}

func TestPredictClientSide(t *testing.T) {
	deployment := func(labels map[string]string, replicas int64, lastApplied string) *unstructured.Unstructured {
		obj := object("apps/v1", "Deployment", "ns", "web", nil, labels)
		if lastApplied != "" {
			obj.SetAnnotations(map[string]string{AnnotationLastApplied: lastApplied})
		}
		obj.Object["spec"] = map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}
		return obj
	}
	live := deployment(map[string]string{"app": "web", "team": "a", "added-by-someone": "x"}, 2, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"web","team":"a"},"name":"web","namespace":"ns"},"spec":{"replicas":2}}`)
	if err := unstructured.SetNestedField(live.Object, int64(10), "spec", "revisionHistoryLimit"); err != nil {
		t.Fatal(err)
	}
	liveWidget := object("example.com/v1", "Widget", "ns", "w", map[string]string{AnnotationLastApplied: `{"spec":{"size":1,"color":"red"}}`}, nil)
	liveWidget.Object["spec"] = map[string]any{"size": int64(1), "color": "red", "owner": "someone-else"}
	widget := object("example.com/v1", "Widget", "ns", "w", nil, nil)
	widget.Object["spec"] = map[string]any{"size": int64(2)}

	tests := map[string]struct {
		desired, live *unstructured.Unstructured
		check         func(t *testing.T, got *unstructured.Unstructured)
	}{
		"defaults and other writers' fields are kept": {
			desired: deployment(map[string]string{"app": "web", "team": "a"}, 2, ""), live: live,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if v, _, _ := unstructured.NestedInt64(got.Object, "spec", "revisionHistoryLimit"); v != 10 {
					t.Errorf("revisionHistoryLimit = %d, want the live default 10", v)
				}
				if diff := cmp.Diff(map[string]string{"app": "web", "team": "a", "added-by-someone": "x"}, got.GetLabels()); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
			},
		},
		"a label removed from Git since the last apply goes, a new value lands": {
			desired: deployment(map[string]string{"app": "web"}, 3, ""), live: live,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if diff := cmp.Diff(map[string]string{"app": "web", "added-by-someone": "x"}, got.GetLabels()); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
				if v, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); v != 3 {
					t.Errorf("replicas = %d, want 3", v)
				}
			},
		},
		"custom resource by JSON merge patch": {
			desired: widget, live: liveWidget,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				spec, _, _ := unstructured.NestedMap(got.Object, "spec")
				if diff := cmp.Diff(map[string]any{"size": int64(2), "owner": "someone-else"}, spec); diff != "" {
					t.Errorf("spec (-want +got):\n%s", diff)
				}
			},
		},
		"missing object predicted as desired": {
			desired: widget,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if diff := cmp.Diff(widget.Object, got.Object); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := PredictClientSide(tc.desired, tc.live)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

// The last-applied annotation holds the object as given, less an older
// last-applied annotation; the object given is left as it was.
func TestWithLastApplied(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        map[string]string // the annotations encoded
	}{
		"no annotations":            {},
		"an older last-applied":     {annotations: map[string]string{AnnotationLastApplied: `{"old":true}`}},
		"others and a last-applied": {annotations: map[string]string{"team": "a", AnnotationLastApplied: `{"old":true}`}, want: map[string]string{"team": "a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object("v1", "ConfigMap", "ns", "c", nil, nil)
			obj.Object["data"] = map[string]any{"a": "1"}
			if tc.annotations != nil {
				obj.SetAnnotations(tc.annotations)
			}
			before := obj.DeepCopy()
			out, err := withLastApplied(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("the object given changed (-before +after):\n%s", diff)
			}
			var encoded unstructured.Unstructured
			if err := json.Unmarshal([]byte(out.GetAnnotations()[AnnotationLastApplied]), &encoded.Object); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, encoded.GetAnnotations()); diff != "" {
				t.Errorf("annotations in last-applied (-want +got):\n%s", diff)
			}
			if encoded.Object["data"] == nil || out.Object["data"] == nil {
				t.Errorf("data missing: encoded %v, out %v", encoded.Object["data"], out.Object["data"])
			}
			want := len(tc.want) + 1
			if got := len(out.GetAnnotations()); got != want {
				t.Errorf("out has %d annotations, want %d (the encoded ones and last-applied)", got, want)
			}
		})
	}
}

// TestTooLargeForClientSide: the last-applied copy counts with the other
// annotations against the limit; an older last-applied annotation does
// not, as client-side apply replaces it.
func TestTooLargeForClientSide(t *testing.T) {
	const kib = 1024
	for name, tc := range map[string]struct {
		data, annotation, lastApplied int // bytes of each
		want                          bool
	}{
		"small":                               {data: 10 * kib},
		"200 KiB of data":                     {data: 200 * kib},
		"270 KiB of data":                     {data: 270 * kib, want: true},
		"data and other annotations":          {data: 150 * kib, annotation: 120 * kib, want: true},
		"a large older last-applied replaced": {data: 10 * kib, lastApplied: 300 * kib},
	} {
		t.Run(name, func(t *testing.T) {
			obj := object("v1", "ConfigMap", "ns", "c", nil, nil)
			obj.Object["data"] = map[string]any{"blob": strings.Repeat("x", tc.data)}
			annotations := map[string]string{}
			if tc.annotation > 0 {
				annotations["note"] = strings.Repeat("y", tc.annotation)
			}
			if tc.lastApplied > 0 {
				annotations[AnnotationLastApplied] = strings.Repeat("z", tc.lastApplied)
			}
			obj.SetAnnotations(annotations)
			size, got := TooLargeForClientSide(obj)
			if got != tc.want {
				t.Errorf("TooLargeForClientSide = %v (last-applied %d bytes), want %v", got, size, tc.want)
			}
			if size < tc.data {
				t.Errorf("last-applied size %d is less than the data (%d)", size, tc.data)
			}
		})
	}
}
