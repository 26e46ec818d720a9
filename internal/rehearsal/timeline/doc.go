// Package timeline owns what a rehearsal sees of its cluster while it
// runs, and the decision that it is over.
//
// Watch (watch.go) sends every change of the Applications and Pods as an
// Observation; a Tracker (timeline.go, pods.go) turns them into timeline
// lines (sync and health changes, wave starts, what a wave waits on, a
// manual app nobody syncs, pod crashes with the Service a pod needs,
// restarts, unschedulable pods) and keeps each app's state; a Printer
// stamps the lines with the seconds since the start and, at a time scale
// other than 1, the seconds at full scale. A Sampler (sampler.go) counts
// nodes and pending pods.
//
// Two decisions read that state. Decide (settle.go) is `wavecd up`'s:
// settled once every app is Synced and Healthy with no operation running
// (PostSync hooks included) for a while, stalled when nothing changes,
// timed out; Unsettled says why each app is not there yet and
// WriteSummary prints up's summary table. A Judge (judge.go) is a
// `wavecd rehearse` run's: converged, stalled (an app carries the
// controller's SyncStalled condition and neither apps nor nodes and pods
// change any more, or nothing changes at all while no sync waits for its
// next attempt; pods that come and go in a loop are no change), or timed
// out; its Result
// fills the run's record of internal/rehearsal/report.
//
// What the package does not own: starting the cluster and the controller,
// applying the root (internal/rehearsal), deciding that a sync stalled
// (internal/sync), the report's types and how they print
// (internal/rehearsal/report).
package timeline
