package install

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestCRDKeepsSyncState(t *testing.T) {
	bundled, err := BundledCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var ours *apiextensionsv1.CustomResourceDefinition
	for _, crd := range bundled {
		if crd.Name == ApplicationCRD {
			ours = crd
		}
	}
	if ours == nil {
		t.Fatal("no bundled Application CRD")
	}
	b, err := os.ReadFile("testdata/application-crd-without-sync-state.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lean := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, lean); err != nil {
		t.Fatal(err)
	}
	preserving := lean.DeepCopy()
	keep := true
	status := preserving.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	status.XPreserveUnknownFields = &keep
	preserving.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = status
	withState := lean.DeepCopy()
	op := withState.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["operationState"]
	op.Properties["wavecdState"] = apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: &keep}
	noSchema := lean.DeepCopy()
	noSchema.Spec.Versions[0].Schema = nil

	tests := map[string]struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		want bool
	}{
		"wavecd's own CRD":                    {crd: ours, want: true},
		"one shaped as Argo CD's":             {crd: lean, want: false},
		"a status that keeps unknown fields":  {crd: preserving, want: true},
		"a wavecdState but no resource times": {crd: withState, want: false},
		"no schema":                           {crd: noSchema, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := crdKeepsSyncState(tc.crd); got != tc.want {
				t.Errorf("crdKeepsSyncState = %v, want %v", got, tc.want)
			}
		})
	}
}
