// Package deploy holds wavecd's install artifacts and their tests; it has
// no code of its own.
//
//   - helm/wavecd: the Helm chart (values shaped like Argo CD's chart:
//     configs.cm becomes argocd-cm, configs.secret argocd-secret, ...).
//   - kustomize: the same install for `kubectl apply -k`, generated from
//     the chart with default values by `make chart-sync`.
//   - build-image.sh, lint-image.sh: `make image` and `make lint-image`.
//
// The tests render the chart with the Helm SDK and the base with kustomize,
// and fail when the two drift apart, when the CRD copies differ from
// api/v1alpha1/crds, when a flag the chart passes is unknown to the wavecd
// binary, when the rendered RBAC or security context loosens, or when the
// Dockerfile no longer builds what `make build` builds. `go test ./deploy
// -update` (run by `make chart-sync`) rewrites the golden files and the
// generated kustomize base.
//
// Package deploy/e2e installs both on the local cluster and runs the real
// binary in the pods: RBAC, failover and self-management.
package deploy
