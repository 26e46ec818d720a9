// Package diagram draws wavecd's pictures as SVG, for the rehearsal
// report (internal/rehearsal/report) and the web UI (internal/server), so a
// rehearsed bootstrap and a live one read the same:
//
//   - Gantt: a sync timeline, a row per app (or object) with a bar from
//     its sync start to Healthy coloured by phase, hooks, wave starts,
//     health and stalls as marks, the critical path highlighted
//     (MarkCriticalPath) and the wait explanation as hover text.
//   - Series: counts over time (nodes, pending pods) as step lines on the
//     same time axis.
//   - Graph: nodes in columns left to right (an app of apps by wave, a
//     resource tree by depth), each a box with a name, status badges and
//     a few lines of text (what it waits on, why it stalled), and edges
//     drawn by kind: parent to child solid, a dependency to its dependent
//     dashed with an arrow, endpoints to their pods dotted.
//
// The package only draws: callers turn their records (a rehearsal's
// observations, Applications' status, a resource tree) into rows, nodes
// and edges; times are seconds from the chart's origin. Pictures render
// with html/template, so every name and message is escaped, and are styled
// by class names whose rules are in CSS (inline it, or serve it as a file
// under a strict Content-Security-Policy). Each picture has a title and a
// description for screen readers; rows and nodes carry their text as
// titles, graph nodes take the keyboard focus (links, or tabindex).
//
// What the package does not own: deciding phases, waves or what an app
// waits on (internal/sync, internal/controller), reading the cluster,
// collapsing a large tree, and the pages around the pictures.
package diagram
