package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// NewScheme returns a scheme with the core Kubernetes types and the
// argoproj.io types, what every wavecd client decodes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register core types: %w", err)
	}
	if err := AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register argoproj.io types: %w", err)
	}
	return s, nil
}
