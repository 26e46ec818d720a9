package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMaskSecretValues(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"kind": "Secret", "data": map[string]any{"a": "c2VjcmV0", "b": "c2VjcmV0", "c": "b3RoZXI="},
	}}
	desired := &unstructured.Unstructured{Object: map[string]any{
		"kind": "Secret", "data": map[string]any{"a": "c2VjcmV0", "c": "bmV3"}, "stringData": map[string]any{"d": "plain"},
	}}
	masks := map[string]string{}
	gotLive, gotDesired := MaskSecretValues(live, masks), MaskSecretValues(desired, masks)
	wantLive := map[string]any{"a": "++++++++", "b": "++++++++", "c": "+++++++++"}
	wantDesired := map[string]any{"a": "++++++++", "c": "++++++++++"}
	if d := cmp.Diff(wantLive, gotLive.Object["data"]); d != "" {
		t.Errorf("live data (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantDesired, gotDesired.Object["data"]); d != "" {
		t.Errorf("desired data (-want +got):\n%s", d)
	}
	if got := gotDesired.Object["stringData"].(map[string]any)["d"]; got != "+++++++++++" {
		t.Errorf("stringData.d = %v, want a fourth mask", got)
	}
	if live.Object["data"].(map[string]any)["a"] != "c2VjcmV0" {
		t.Error("the input was changed")
	}
	if MaskSecretValues(nil, masks) != nil {
		t.Error("nil did not stay nil")
	}
}
