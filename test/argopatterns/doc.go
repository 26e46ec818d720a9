// Package argopatterns holds the corpus test: small repositories under
// ../argo-patterns, each written the way Argo CD users write them (an app
// of apps as a Helm chart, generateName and Helm hooks, waves with Jobs,
// a CRD with its resources, a missing CRD, a root without automated sync,
// an operator whose custom resources it finalizes, ...), bootstrapped
// with `wavecd up` on a fresh local cluster. Each pattern's expect.yaml
// says what a user of Argo CD expects to see at the end: every app's sync
// and health, how many times each hook ran, which objects exist, the
// order they were created in, and what up printed; with deleteRoot, that
// deleting the root leaves nothing (simulated pods run nothing, so a
// pattern's operator is stood in for by testenv.FinalizerOperator, which
// clears its finalizer only while the operator's Deployment is not being
// deleted).
//
// The package has no code of its own; it keeps wavecd honest about
// repositories nobody on the project wrote for it.
package argopatterns
