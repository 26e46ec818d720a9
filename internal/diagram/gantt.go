package diagram

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Phase is what an app does during one span of its bar: the span's
// colour and its legend entry.
type Phase string

// The phases, in legend order.
const (
	// Syncing: its sync operation runs (objects applied, waves waited on).
	Syncing Phase = "syncing"
	// Progressing: its sync ended and it is not Healthy yet.
	Progressing Phase = "progressing"
	// Settled: from its sync start until it was Synced and Healthy, where
	// the records do not tell syncing and progressing apart.
	Settled Phase = "settled"
	// Waiting: started and not Synced and Healthy yet, where the records
	// do not tell syncing and progressing apart.
	Waiting Phase = "waiting"
	// Stalled: no progress while pods it waits on cannot be scheduled.
	Stalled Phase = "stalled"
	// Failed: its sync failed.
	Failed Phase = "failed"
)

var phases = []struct {
	phase  Phase
	legend string
}{
	{Syncing, "syncing"},
	{Progressing, "synced, not Healthy yet"},
	{Settled, "sync start until Synced and Healthy"},
	{Waiting, "not Synced and Healthy yet"},
	{Stalled, "stalled (SyncStalled)"},
	{Failed, "sync failed"},
}

// MarkKind is what a mark on a bar stands for.
type MarkKind string

// The marks.
const (
	// MarkHook: a hook ran, from At until Until.
	MarkHook MarkKind = "hook"
	// MarkHealthy: the app turned Healthy.
	MarkHealthy MarkKind = "healthy"
	// MarkStall: the app's sync stalled.
	MarkStall MarkKind = "stall"
	// MarkWave: a wave of the app's own objects started.
	MarkWave MarkKind = "wave"
)

// Segment is one phase of a bar, from From to To seconds.
type Segment struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Phase Phase   `json:"phase"`
}

// Mark is a point (or, for a hook with Until after At, a span) on a bar.
type Mark struct {
	At    float64  `json:"at"`
	Until float64  `json:"until,omitempty"`
	Kind  MarkKind `json:"kind"`
	// Label is the mark's hover text.
	Label string `json:"label"`
}

// Row is one app of a Gantt chart.
type Row struct {
	// ID names the row in the SVG (data-row) and in Parent and DependsOn.
	ID    string `json:"id"`
	Label string `json:"label"`
	// Href links the label (the app's page); empty for none.
	Href string `json:"href,omitempty"`
	// Title is the row's hover text: its times and what it waits on.
	Title string `json:"title,omitempty"`
	// Created is when the app appeared; a dotted line joins it to the
	// bar. Negative when unknown.
	Created  float64   `json:"created"`
	Segments []Segment `json:"segments,omitempty"`
	Marks    []Mark    `json:"marks,omitempty"`
	// Never marks an app its parent never created.
	Never bool `json:"never,omitempty"`
	// Parent, Wave and DependsOn say what the row waited on, for the
	// critical path: the rows of the same parent in an earlier wave, and
	// those named in DependsOn, end before it starts; the parent starts it.
	Parent    string   `json:"parent,omitempty"`
	Wave      int      `json:"wave,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	// Critical is set by MarkCriticalPath.
	Critical bool `json:"critical,omitempty"`
}

// start is when the row's bar begins; NaN without a bar.
func (r *Row) start() float64 {
	if len(r.Segments) == 0 {
		return math.NaN()
	}
	s := r.Segments[0].From
	for _, seg := range r.Segments[1:] {
		s = math.Min(s, seg.From)
	}
	return s
}

// end is when the row's bar ends; NaN without a bar.
func (r *Row) end() float64 {
	if len(r.Segments) == 0 {
		return math.NaN()
	}
	e := r.Segments[0].To
	for _, seg := range r.Segments[1:] {
		e = math.Max(e, seg.To)
	}
	return e
}

// Line is a vertical marker across the chart: how a run ended, or now.
type Line struct {
	At    float64 `json:"at"`
	Label string  `json:"label"`
}

// Gantt is a chart of apps over time.
type Gantt struct {
	// ID is unique within the page that shows the chart: it prefixes the
	// SVG's element ids.
	ID string `json:"id"`
	// Label is what the chart shows, its accessible name.
	Label string `json:"label"`
	// End is where the time axis ends at least; the axis also reaches
	// the last segment, mark and line.
	End   float64 `json:"end,omitempty"`
	Rows  []Row   `json:"rows"`
	Lines []Line  `json:"lines,omitempty"`
}

// Geometry of the Gantt chart.
const (
	rowHeight      = 28.0
	barHeight      = 16.0
	legendSpace    = 26.0
	lineLabelSpace = 14.0
	maxLabel       = 30
)

// ganttLayout is a Gantt chart placed on the page, what the template reads.
type ganttLayout struct {
	ID, Label, Desc     string
	Width, Height       float64
	PlotLeft, PlotRight float64
	GridTop, PlotBottom float64
	Ticks               []tick
	Rows                []rowLayout
	Lines               []lineLayout
	Legend              []legendItem
	HatchID, TitleID    string
}

type rowLayout struct {
	ID, Label, Href, Title string
	Y, TextY, BarY, MidY   float64
	CreatedX, CreatedTo    float64
	HasCreated, Never      bool
	Critical               bool
	Segments               []segmentLayout
	Marks                  []markLayout
}

type segmentLayout struct {
	X, W  float64
	Phase Phase
	Title string
}

type markLayout struct {
	Kind   MarkKind
	X, X2  float64
	Y      float64
	Label  string
	Spans  bool
	Path   string
	Radius float64
}

type lineLayout struct {
	X, TextX      float64
	Label, Anchor string
}

type legendItem struct {
	X, Y  float64
	Class string
	Kind  string
	Text  string
}

// end is where the chart's time axis must reach.
func (g *Gantt) end() float64 {
	end := math.Max(g.End, 1)
	for i := range g.Rows {
		r := &g.Rows[i]
		for _, s := range r.Segments {
			end = math.Max(end, s.To)
		}
		for _, m := range r.Marks {
			end = math.Max(end, math.Max(m.At, m.Until))
		}
		end = math.Max(end, r.Created)
	}
	for _, l := range g.Lines {
		end = math.Max(end, l.At)
	}
	return end
}

// layout places the chart's rows, bars and marks.
func (g *Gantt) layout() ganttLayout {
	sc := newScale(g.end())
	id := cleanID(g.ID)
	top := chartTop
	if slices.ContainsFunc(g.Lines, func(l Line) bool { return l.Label != "" }) {
		top += lineLabelSpace
	}
	l := ganttLayout{
		ID: id, Label: g.Label, Desc: g.Summary(), Width: width, PlotLeft: labelWidth, PlotRight: labelWidth + plotWidth,
		Ticks: sc.ticks(), HatchID: id + "-hatch", TitleID: id + "-title",
	}
	used := map[string]bool{}
	for i := range g.Rows {
		r := &g.Rows[i]
		y := top + float64(i)*rowHeight
		rl := rowLayout{
			ID: r.ID, Label: shorten(r.Label, maxLabel), Href: r.Href, Title: r.Title, Y: y,
			TextY: y + rowHeight/2 + 4, BarY: y + (rowHeight-barHeight)/2, MidY: y + rowHeight/2, Never: r.Never, Critical: r.Critical,
		}
		if rl.Title == "" {
			rl.Title = r.Label
		}
		if r.Critical {
			used["critical"] = true
		}
		if !r.Never && r.Created >= 0 && len(r.Segments) > 0 && r.Created < r.start() {
			rl.HasCreated, rl.CreatedX, rl.CreatedTo = true, sc.x(r.Created), sc.x(r.start())
			used["created"] = true
		}
		for _, s := range r.Segments {
			x := sc.x(s.From)
			rl.Segments = append(rl.Segments, segmentLayout{
				X: x, W: math.Max(2, round1(sc.x(s.To)-x)), Phase: s.Phase,
				Title: fmt.Sprintf("%s %s to %s", s.Phase, Duration(s.From), Duration(s.To)),
			})
			used[string(s.Phase)] = true
		}
		for _, m := range r.Marks {
			rl.Marks = append(rl.Marks, markOf(sc, m, rl))
			used["m-"+string(m.Kind)] = true
		}
		l.Rows = append(l.Rows, rl)
	}
	l.GridTop, l.PlotBottom = top-6, top+float64(len(g.Rows))*rowHeight
	for _, ln := range g.Lines {
		x := sc.x(ln.At)
		ll := lineLayout{X: x, Label: ln.Label, TextX: x + 4, Anchor: "start"}
		if x > labelWidth+plotWidth*0.7 {
			ll.TextX, ll.Anchor = x-4, "end"
		}
		l.Lines = append(l.Lines, ll)
	}
	l.Legend = legend(used, l.PlotBottom+axisHeight+4)
	l.Height = l.PlotBottom + axisHeight
	if n := len(l.Legend); n > 0 {
		l.Height = l.Legend[n-1].Y + legendSpace - 8
	}
	return l
}

// markOf places one mark on its row.
func markOf(sc scale, m Mark, r rowLayout) markLayout {
	x := sc.x(m.At)
	ml := markLayout{Kind: m.Kind, X: x, Y: r.MidY, Label: m.Label}
	switch m.Kind {
	case MarkHook:
		top, bottom := r.BarY-3, r.BarY+barHeight+3
		ml.Path = fmt.Sprintf("M%g,%g L%g,%g L%g,%g L%g,%g Z", x, top, x+5, r.MidY, x, bottom, x-5, r.MidY)
		if m.Until > m.At {
			ml.Spans, ml.X2 = true, sc.x(m.Until)
		}
	case MarkWave:
		ml.Path = fmt.Sprintf("M%g,%g L%g,%g", x, r.BarY-2, x, r.BarY+barHeight+2)
	case MarkStall:
		ml.Radius = 6
	default:
		ml.Radius = 4
	}
	return ml
}

// legend lists what the chart uses (phases, marks, the critical path),
// in lines from y down.
func legend(used map[string]bool, y float64) []legendItem {
	var items []legendItem
	x := 4.0
	add := func(class, kind, text string) {
		w := 34 + float64(len(text))*6.2
		if x > 4 && x+w > width {
			x, y = 4, y+legendSpace-8
		}
		items = append(items, legendItem{X: x, Y: y, Class: class, Kind: kind, Text: text})
		x = round1(x + w)
	}
	for _, p := range phases {
		if used[string(p.phase)] {
			add(string(p.phase), "bar", p.legend)
		}
	}
	for _, m := range []struct {
		kind MarkKind
		text string
	}{{MarkHook, "hook"}, {MarkWave, "wave start"}, {MarkHealthy, "Healthy"}, {MarkStall, "stall"}} {
		if used["m-"+string(m.kind)] {
			add(string(m.kind), "mark", m.text)
		}
	}
	if used["created"] {
		add("created", "line", "created, waiting to sync")
	}
	if used["critical"] {
		add("critical", "critical", "critical path")
	}
	return items
}

// Summary is the chart in a sentence or two: its text alternative.
func (g *Gantt) Summary() string {
	var b strings.Builder
	var started, healthy int
	for i := range g.Rows {
		r := &g.Rows[i]
		if len(r.Segments) > 0 {
			started++
		}
		if slices.ContainsFunc(r.Marks, func(m Mark) bool { return m.Kind == MarkHealthy }) ||
			slices.ContainsFunc(r.Segments, func(s Segment) bool { return s.Phase == Settled }) {
			healthy++
		}
	}
	fmt.Fprintf(&b, "%d rows over %s: %d started, %d turned Healthy.", len(g.Rows), Duration(g.end()), started, healthy)
	var path []string
	for i := range g.Rows {
		if g.Rows[i].Critical {
			path = append(path, g.Rows[i].Label)
		}
	}
	if len(path) > 0 {
		fmt.Fprintf(&b, " Critical path: %s.", strings.Join(path, " → "))
	}
	for i := range g.Rows {
		if slices.ContainsFunc(g.Rows[i].Segments, func(s Segment) bool { return s.Phase == Stalled }) {
			fmt.Fprintf(&b, " %s stalled.", g.Rows[i].Label)
		}
	}
	return b.String()
}

// shorten cuts s to n runes, ending with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// cleanID keeps the letters, digits and dashes of id, for element ids.
func cleanID(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	if b.Len() == 0 {
		return "timeline"
	}
	return b.String()
}
