package rehearsal

import (
	"fmt"
	"math"
	"strings"
)

// Chart geometry of the HTML report, in SVG user units.
const (
	chartLabelWidth = 190.0
	chartPlotWidth  = 700.0
	chartRowHeight  = 30.0
	chartTop        = 10.0
	chartAxis       = 28.0
	seriesHeight    = 150.0
)

// appChart is the apps-by-wave chart of one run: a row per app, a bar from
// its sync start to the time it turned Healthy, or to the run's end.
type appChart struct {
	Width, Height float64
	Rows          []appRow
	Ticks         []tick
	// Verdict marks when the run converged or stalled.
	VerdictX     float64
	VerdictLabel string
	PlotLeft     float64
	PlotBottom   float64
}

// appRow is one app of the chart.
type appRow struct {
	Label string
	Y     float64
	// CreatedX is where the app appears; a thin line joins it to the bar.
	CreatedX float64
	// X and W are the bar: from its sync start to the time it settled
	// (Class healthy), or to its stall or the end (Class waiting).
	X, W  float64
	Class string
	// StallX and StallW are the stalled part, from its SyncStalled
	// condition to the end; StallW is 0 when it never stalled.
	StallX, StallW float64
	// Never is set for an app its parent never created.
	Never bool
	Title string
}

// tick is a mark of the time axis.
type tick struct {
	X     float64
	Label string
}

// seriesChart is nodes and pending pods over a run.
type seriesChart struct {
	Width, Height float64
	PlotLeft      float64
	PlotBottom    float64
	Ticks         []tick
	YTicks        []yTick
	Lines         []seriesLine
}

type yTick struct {
	Y     float64
	Label string
}

// seriesLine is one step line of the series chart.
type seriesLine struct {
	Name   string
	Class  string
	Points string
	// Area closes Points down to zero, for a filled line; "" when unfilled.
	Area string
	Last int
}

// timeScale maps seconds to x over [0, max].
type timeScale struct{ max float64 }

func newTimeScale(end float64) timeScale {
	step := tickStep(end)
	return timeScale{max: math.Max(step, math.Ceil(end/step)*step)}
}

func (s timeScale) x(sec float64) float64 {
	sec = math.Max(0, math.Min(sec, s.max))
	return round1(chartLabelWidth + sec/s.max*chartPlotWidth)
}

func (s timeScale) ticks() []tick {
	step := tickStep(s.max)
	var out []tick
	for t := 0.0; t <= s.max+1e-9; t += step {
		out = append(out, tick{X: s.x(t), Label: fmt.Sprintf("%gs", t)})
	}
	return out
}

// tickStep picks a step giving 4 to 12 ticks.
func tickStep(span float64) float64 {
	for _, step := range []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300} {
		if span/step <= 12 {
			return step
		}
	}
	return 600
}

// buildAppChart lays out the apps of a run.
func buildAppChart(run RunResult) appChart {
	sc := newTimeScale(run.End)
	c := appChart{Width: chartLabelWidth + chartPlotWidth + 20, PlotLeft: chartLabelWidth, Ticks: sc.ticks()}
	for i, a := range run.Apps {
		row := appRow{Label: appLabel(a), Y: chartTop + float64(i)*chartRowHeight, Title: appTitle(a)}
		if a.Created < 0 {
			row.Never, row.X = true, sc.x(0)
			c.Rows = append(c.Rows, row)
			continue
		}
		start := a.SyncStarted
		if start < 0 {
			start = a.Created
		}
		end, class := run.End, "waiting"
		switch {
		case a.Settled >= 0:
			end, class = a.Settled, "healthy"
		case a.Stalled >= 0:
			end = a.Stalled
			row.StallX = sc.x(a.Stalled)
			row.StallW = math.Max(2, round1(sc.x(run.End)-row.StallX))
		}
		row.CreatedX, row.X, row.Class = sc.x(a.Created), sc.x(start), class
		row.W = math.Max(2, round1(sc.x(end)-row.X))
		c.Rows = append(c.Rows, row)
	}
	c.PlotBottom = chartTop + float64(len(run.Apps))*chartRowHeight
	c.Height = c.PlotBottom + chartAxis
	c.VerdictX = sc.x(run.At)
	c.VerdictLabel = run.headline()
	return c
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

// buildSeriesChart draws nodes, Ready nodes, pending and unschedulable
// pods as step lines.
func buildSeriesChart(run RunResult) seriesChart {
	sc := newTimeScale(run.End)
	c := seriesChart{Width: chartLabelWidth + chartPlotWidth + 20, PlotLeft: chartLabelWidth, Ticks: sc.ticks()}
	c.PlotBottom = chartTop + seriesHeight
	c.Height = c.PlotBottom + chartAxis
	top := 1
	for _, s := range run.Samples {
		top = max(top, s.Nodes, s.Pending)
	}
	y := func(v int) float64 { return round1(c.PlotBottom - float64(v)/float64(top)*seriesHeight) }
	ystep := max(1, int(math.Ceil(float64(top)/5)))
	for v := 0; v <= top; v += ystep {
		c.YTicks = append(c.YTicks, yTick{Y: y(v), Label: fmt.Sprint(v)})
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
		var pts []string
		last := 0
		for i, s := range run.Samples {
			v := l.get(s)
			if i > 0 {
				pts = append(pts, fmt.Sprintf("%g,%g", sc.x(s.At), y(last)))
			}
			pts = append(pts, fmt.Sprintf("%g,%g", sc.x(s.At), y(v)))
			last = v
		}
		line := seriesLine{Name: l.name, Class: l.class, Points: strings.Join(pts, " "), Last: last}
		if l.class == "pending" && len(run.Samples) > 0 {
			first, end := run.Samples[0], run.Samples[len(run.Samples)-1]
			line.Area = fmt.Sprintf("%g,%g %s %g,%g", sc.x(first.At), y(0), line.Points, sc.x(end.At), y(0))
		}
		c.Lines = append(c.Lines, line)
	}
	return c
}
