package appset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestClusterDecisionResourceErrors checks what is refused before any
// resource is listed: the ConfigMap's fields, the selection, and a
// generation with no cluster to read.
func TestClusterDecisionResourceErrors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "decisions", "bad-configmaps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objects StaticObjects
	for _, doc := range splitYAML(t, string(raw)) {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, o)
	}
	tests := map[string]struct {
		configMap, name string
		selector        map[string]string
		offline         bool
		wantErr         string
	}{
		"apiVersion without a group": {configMap: "no-group", name: "d", wantErr: `ConfigMap no-group: apiVersion "v1beta1" and kind "placementdecisions" must name a group/version and a resource`},
		"no matchKey":                {configMap: "no-match-key", name: "d", wantErr: "ConfigMap no-match-key: matchKey is empty"},
		"a ConfigMap not there":      {configMap: "missing", name: "d", wantErr: `configMapRef: read ConfigMap argocd/missing`},
		"neither name nor selector":  {configMap: "good", wantErr: "set name or labelSelector"},
		"both name and selector":     {configMap: "good", name: "d", selector: map[string]string{"a": "b"}, wantErr: "set either name or labelSelector, not both"},
		"no cluster to read":         {configMap: "good", name: "d", offline: true, wantErr: "needs a cluster to read"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := readAppSet(t, filepath.Join("testdata", "decisions", "appset.yaml"))
			set.Namespace = "argocd"
			d := set.Spec.Generators[0].ClusterDecisionResource
			d.ConfigMapRef, d.Name, d.LabelSelector = tc.configMap, tc.name, metav1.LabelSelector{MatchLabels: tc.selector}
			in := Inputs{Objects: objects, Resources: KubeResources{}} // refused before any list
			if tc.offline {
				in.Resources = nil
			}
			_, err := Generate(context.Background(), set, in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "generators[0].clusterDecisionResource: ") {
				t.Fatalf("error = %v, want one naming the generator and containing %q", err, tc.wantErr)
			}
		})
	}
}
