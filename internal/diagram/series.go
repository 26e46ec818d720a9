package diagram

import (
	"fmt"
	"math"
	"strings"
)

// Series is counts over time as step lines (nodes, pending pods) on the
// same time axis as a Gantt chart.
type Series struct {
	// ID is unique within the page; Label is the accessible name; YLabel
	// names the counts.
	ID     string `json:"id"`
	Label  string `json:"label"`
	YLabel string `json:"yLabel,omitempty"`
	// End is where the time axis ends at least.
	End   float64      `json:"end,omitempty"`
	Lines []SeriesLine `json:"lines"`
}

// SeriesLine is one step line: each value holds until the next point.
type SeriesLine struct {
	Name string `json:"name"`
	// Class styles the line; the page that shows the chart colours it.
	Class  string  `json:"class"`
	Points []Point `json:"points"`
	// Fill shades the area under the line.
	Fill bool `json:"fill,omitempty"`
}

// Point is a value from a time on.
type Point struct {
	At    float64 `json:"at"`
	Value int     `json:"value"`
}

const seriesHeight = 150.0

type seriesLayout struct {
	ID, Label, Desc, YLabel string
	Width, Height           float64
	PlotLeft, PlotRight     float64
	PlotBottom              float64
	Ticks                   []tick
	YTicks                  []tick
	Lines                   []seriesLineLayout
}

type seriesLineLayout struct {
	Name, Class, Points, Area string
	Last                      int
}

func (s *Series) layout() seriesLayout {
	end := math.Max(s.End, 1)
	top := 1
	for _, l := range s.Lines {
		for _, p := range l.Points {
			end = math.Max(end, p.At)
			top = max(top, p.Value)
		}
	}
	sc := newScale(end)
	out := seriesLayout{
		ID: cleanID(s.ID), Label: s.Label, YLabel: s.YLabel, Width: width, PlotLeft: labelWidth, PlotRight: labelWidth + plotWidth,
		Ticks: sc.ticks(), PlotBottom: chartTop + seriesHeight,
	}
	out.Height = out.PlotBottom + axisHeight
	y := func(v int) float64 { return round1(out.PlotBottom - float64(v)/float64(top)*seriesHeight) }
	step := max(1, int(math.Ceil(float64(top)/5)))
	for v := 0; v <= top; v += step {
		out.YTicks = append(out.YTicks, tick{X: y(v), Label: fmt.Sprint(v)})
	}
	var desc []string
	for _, l := range s.Lines {
		var pts []string
		last := 0
		for i, p := range l.Points {
			if i > 0 {
				pts = append(pts, fmt.Sprintf("%g,%g", sc.x(p.At), y(last)))
			}
			pts = append(pts, fmt.Sprintf("%g,%g", sc.x(p.At), y(p.Value)))
			last = p.Value
		}
		ll := seriesLineLayout{Name: l.Name, Class: l.Class, Points: strings.Join(pts, " "), Last: last}
		if l.Fill && len(l.Points) > 0 {
			first, final := l.Points[0], l.Points[len(l.Points)-1]
			ll.Area = fmt.Sprintf("%g,%g %s %g,%g", sc.x(first.At), y(0), ll.Points, sc.x(final.At), y(0))
		}
		out.Lines = append(out.Lines, ll)
		desc = append(desc, fmt.Sprintf("%s: %d at the end", l.Name, last))
	}
	out.Desc = strings.Join(desc, "; ") + "."
	return out
}
