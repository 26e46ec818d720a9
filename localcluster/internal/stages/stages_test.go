package stages

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestConfigHoldsEveryStage(t *testing.T) {
	cfg, err := Config()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, doc := range strings.Split(cfg, "\n---\n") {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ResourceRef struct {
					Kind string `json:"kind"`
				} `json:"resourceRef"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("stage document does not parse: %v\n%s", err, doc)
		}
		if obj.Kind != "Stage" {
			t.Fatalf("document kind = %q, want Stage", obj.Kind)
		}
		got[obj.Metadata.Name] = obj.Spec.ResourceRef.Kind
	}
	want := map[string]string{
		"node-initialize": "Node", "node-heartbeat-with-lease": "Node",
		"pod-create": "Pod", "pod-init-containers": "Pod", "pod-ready": "Pod",
		"pod-complete": "Pod", "pod-fail": "Pod", "pod-delete": "Pod",
	}
	for name, kind := range want {
		if got[name] != kind {
			t.Errorf("stage %s: resource kind %q, want %q", name, got[name], kind)
		}
	}
	if len(got) != len(want) {
		t.Errorf("stages = %v, want exactly %v", got, want)
	}
}
