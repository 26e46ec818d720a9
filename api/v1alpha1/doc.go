// Package v1alpha1 holds wavecd's Argo CD-compatible API types (group
// argoproj.io, version v1alpha1). Field names and JSON tags are exactly Argo
// CD's, so Argo CD manifests decode unchanged. The package owns the wire
// format only: no behaviour beyond small accessors lives here.
package v1alpha1
