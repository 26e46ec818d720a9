// Package report owns the outcome of `wavecd rehearse`: the Report of one
// scenario (each run's verdict, the reason a run did not converge, its
// apps, its node and pod counts, its timeline) and how it reads: a text
// summary (WriteSummary), JSON (the types' tags), and a self-contained
// HTML page (WriteHTML, html.go) with a chart of the apps by wave and one
// of nodes and pending pods over time (chart.go turns a run into the
// pictures internal/diagram draws, as the web UI draws a live sync).
//
// The package only holds and prints records. What the package does not
// own: watching the cluster and judging a run, which fill a RunResult
// (internal/rehearsal/timeline), running the scenario
// (internal/rehearsal), drawing (internal/diagram).
package report
