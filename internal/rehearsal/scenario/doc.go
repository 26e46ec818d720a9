// Package scenario owns the scenarios of a rehearsed repository: files
// scenarios/<name>.yaml, each a value file of the root Application's Helm
// chart whose rehearsal: key says how `wavecd rehearse` runs it: the
// settings file, the local cluster's profile, the verdict it is meant to
// reach, the files it needs next to wavecd-localcluster (and how to build
// them), files to add to the served snapshot, and values to draw from each
// run's seed (a range of durations or of whole numbers per dotted path).
//
// Load reads and checks a scenario (each error names its field, and keys
// of earlier versions say what replaced them), List names a repository's
// scenarios, Draw picks a run's values, and Root adds the scenario's value
// file and the drawn values to the root Applications.
//
// What the package does not own: running a scenario and judging its runs
// (internal/rehearsal, internal/rehearsal/timeline), reading the root
// manifest (internal/rehearsal/manifest), rendering the chart
// (internal/render).
package scenario
