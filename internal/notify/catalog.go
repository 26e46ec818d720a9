package notify

import (
	_ "embed"
	"fmt"
	"maps"

	"sigs.k8s.io/yaml"
)

// catalogYAML is the notification catalog, an argocd-notifications-cm.
//
//go:embed catalog.yaml
var catalogYAML []byte

// CatalogYAML returns the catalog as the ConfigMap it is written as.
func CatalogYAML() []byte { return catalogYAML }

// Catalog returns the catalog's keys: Argo CD's default triggers and
// templates, and wavecd's.
func Catalog() (map[string]string, error) {
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]any    `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(catalogYAML, &cm); err != nil {
		return nil, fmt.Errorf("notification catalog: %w", err)
	}
	return cm.Data, nil
}

// WithCatalog returns data with the catalog's keys it lacks added.
func WithCatalog(data map[string]string) (map[string]string, error) {
	out, err := Catalog()
	if err != nil {
		return nil, err
	}
	maps.Copy(out, data)
	return out, nil
}
