// Package timeline draws sync timelines as SVG: a Gantt chart of apps
// over time (a row per app, a bar from its sync start to Healthy coloured
// by phase, hooks, health and stalls as marks, the critical path
// highlighted, the wait explanation as hover text) and step-line series
// over the same time axis. The rehearsal report (internal/rehearsal) and
// the web UI (internal/server) draw with it, so a rehearsed bootstrap and
// a live one read the same.
//
// The package only draws: callers turn their records (a rehearsal's
// observations, an Application tree's status) into Rows and Lines. Times
// are seconds from the chart's origin. Charts render with html/template,
// so every label and title is escaped; the output is an <svg> element
// styled by class names, whose rules are in CSS (inline it, or serve it as
// a file under a strict Content-Security-Policy). The SVG carries a title
// and a description for screen readers, and each row's text as a <title>.
//
// What the package does not own: deciding phases, waves or what an app
// waits on (internal/sync, internal/controller), reading the cluster, and
// the pages around the pictures.
package timeline
