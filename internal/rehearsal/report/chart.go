package report

import (
	"fmt"
	"strings"

	"github.com/wavecd/wavecd/internal/diagram"
)

// appChart is the apps-by-wave chart of one run, drawn by internal/diagram
// as the web UI draws a live sync: a row per app, a bar from its sync start
// to the time it settled (Synced and Healthy), or to the run's end, hatched
// from its SyncStalled condition on.
func appChart(run RunResult) diagram.Gantt {
	g := diagram.Gantt{
		ID: fmt.Sprintf("run-%d-apps", run.Run), Label: "apps by wave over time", End: run.End,
		Lines: []diagram.Line{{At: run.At, Label: run.headline()}},
	}
	root := ""
	for _, a := range run.Apps {
		if a.Root {
			root = a.Name
		}
	}
	for _, a := range run.Apps {
		row := diagram.Row{ID: a.Name, Label: appLabel(a), Title: appTitle(a), Created: a.Created, Wave: a.Wave}
		if !a.Root {
			row.Parent = root
		}
		if a.Created < 0 {
			row.Never = true
			g.Rows = append(g.Rows, row)
			continue
		}
		start := a.SyncStarted
		if start < 0 {
			start = a.Created
		}
		switch {
		case a.Settled >= 0:
			row.Segments = []diagram.Segment{{From: start, To: a.Settled, Phase: diagram.Settled}}
		case a.Stalled >= 0:
			row.Segments = []diagram.Segment{
				{From: start, To: a.Stalled, Phase: diagram.Waiting}, {From: a.Stalled, To: run.End, Phase: diagram.Stalled},
			}
			row.Marks = append(row.Marks, diagram.Mark{At: a.Stalled, Kind: diagram.MarkStall, Label: fmt.Sprintf("stalled at %.1fs", a.Stalled)})
		default:
			row.Segments = []diagram.Segment{{From: start, To: run.End, Phase: diagram.Waiting}}
		}
		if a.Healthy >= 0 {
			row.Marks = append(row.Marks, diagram.Mark{At: a.Healthy, Kind: diagram.MarkHealthy, Label: fmt.Sprintf("Healthy at %.1fs", a.Healthy)})
		}
		g.Rows = append(g.Rows, row)
	}
	diagram.MarkCriticalPath(g.Rows)
	return g
}

func appLabel(a AppRecord) string {
	if a.Root {
		return a.Name
	}
	return fmt.Sprintf("%s (wave %d)", a.Name, a.Wave)
}

func appTitle(a AppRecord) string {
	parts := []string{a.Name + ": " + orDash(a.Sync) + " " + orDash(a.Health)}
	if a.Created >= 0 {
		parts = append(parts, fmt.Sprintf("created %.1fs", a.Created))
	}
	if a.SyncStarted >= 0 {
		parts = append(parts, fmt.Sprintf("sync started %.1fs", a.SyncStarted))
	}
	if a.Healthy >= 0 {
		parts = append(parts, fmt.Sprintf("Healthy %.1fs", a.Healthy))
	}
	if a.Settled >= 0 {
		parts = append(parts, fmt.Sprintf("settled %.1fs", a.Settled))
	}
	if a.Stalled >= 0 {
		parts = append(parts, fmt.Sprintf("stalled %.1fs", a.Stalled))
	}
	return strings.Join(parts, ", ")
}

// seriesChart is nodes, Ready nodes, pending and unschedulable pods over
// a run, as step lines.
func seriesChart(run RunResult) diagram.Series {
	s := diagram.Series{
		ID: fmt.Sprintf("run-%d-nodes", run.Run), Label: "nodes and pending pods over time", YLabel: "nodes / pods", End: run.End,
	}
	for _, l := range []struct {
		name, class string
		get         func(Sample) int
	}{
		{"nodes", "nodes", func(s Sample) int { return s.Nodes }},
		{"Ready nodes", "ready", func(s Sample) int { return s.ReadyNodes }},
		{"pending pods", "pending", func(s Sample) int { return s.Pending }},
		{"unschedulable pods", "unschedulable", func(s Sample) int { return s.Unschedulable }},
	} {
		line := diagram.SeriesLine{Name: l.name, Class: l.class, Fill: l.class == "pending"}
		for _, smp := range run.Samples {
			line.Points = append(line.Points, diagram.Point{At: smp.At, Value: l.get(smp)})
		}
		s.Lines = append(s.Lines, line)
	}
	return s
}
