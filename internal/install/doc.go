// Package install owns putting wavecd's cluster-wide prerequisites into a
// cluster: today the argoproj.io CustomResourceDefinitions. It applies the
// CRDs generated from api/v1alpha1 with server-side apply, and leaves a CRD
// that Argo CD installed alone, so wavecd and an existing Argo CD
// installation read the same Applications.
package install
