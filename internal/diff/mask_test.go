package diff

import (
	"strings"
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

// TestWithTextMasksSecrets: the text of a Secret out of sync names the
// key that changed, never a value; Live and Predicted keep theirs.
func TestWithTextMasksSecrets(t *testing.T) {
	secret := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "ns"},
			"data": map[string]any{"password": v},
		}}
	}
	res, err := Compare(t.Context(), secret("bmV3LXMzY3IzdA=="), secret("b2xkLXMzY3IzdA=="), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = res.WithText(); err != nil {
		t.Fatal(err)
	}
	if res.Status != OutOfSync || !strings.Contains(res.Text, "password:") {
		t.Fatalf("text does not show the changed key:\n%s", res.Text)
	}
	for _, v := range []string{"bmV3LXMzY3IzdA==", "b2xkLXMzY3IzdA=="} {
		if strings.Contains(res.Text, v) {
			t.Errorf("the text holds the value %s:\n%s", v, res.Text)
		}
	}
	if res.Predicted.Object["data"].(map[string]any)["password"] != "bmV3LXMzY3IzdA==" {
		t.Error("the predicted object was masked")
	}
}
