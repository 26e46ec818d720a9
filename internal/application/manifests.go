package application

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// DecodeManifests decodes manifests, one object of YAML or JSON each, as
// operation.sync.manifests holds them. An error names the manifest by
// its index and the field that is missing.
func DecodeManifests(manifests []string) ([]*unstructured.Unstructured, error) {
	if len(manifests) == 0 {
		return nil, errors.New("operation.sync.manifests is empty")
	}
	out := make([]*unstructured.Unstructured, 0, len(manifests))
	for i, text := range manifests {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(text), &obj.Object); err != nil {
			return nil, fmt.Errorf("operation.sync.manifests[%d]: %w", i, err)
		}
		if err := checkManifest(obj); err != nil {
			return nil, fmt.Errorf("operation.sync.manifests[%d]: %w", i, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// checkManifest requires what every object sent to the API server needs.
func checkManifest(obj *unstructured.Unstructured) error {
	switch {
	case obj.Object == nil:
		return errors.New("holds no object")
	case obj.GetAPIVersion() == "":
		return errors.New("apiVersion is missing")
	case obj.GetKind() == "":
		return errors.New("kind is missing")
	case obj.IsList():
		return fmt.Errorf("%s is a list: give one object per manifest", obj.GetKind())
	case obj.GetName() == "" && obj.GetGenerateName() == "":
		return fmt.Errorf("%s: metadata.name is missing", obj.GetKind())
	}
	return nil
}
