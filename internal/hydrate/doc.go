// Package hydrate owns Argo CD's source hydrator (spec.sourceHydrator):
// when an app's dry source is hydrated again, rendering it and committing
// the result to its branch in Argo CD's layout (manifest.yaml,
// hydrator.metadata and README.md in the sync source's path, a note
// naming the dry commit), and what the app's status.sourceHydrator says
// of it. The controller then syncs the sync source like any Git source.
package hydrate
