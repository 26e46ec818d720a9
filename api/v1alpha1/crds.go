package v1alpha1

import "embed"

// CRDs holds the CustomResourceDefinitions generated from these types
// (`make generate`), one file per kind.
//
//go:embed crds/*.yaml
var CRDs embed.FS
