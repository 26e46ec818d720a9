package kube

import (
	"encoding/json"
	"errors"
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
