package diagram

import (
	"fmt"
	"math"
)

// Geometry shared by both charts, in SVG user units.
const (
	labelWidth = 200.0
	plotWidth  = 700.0
	rightPad   = 24.0
	chartTop   = 10.0
	axisHeight = 28.0
	width      = labelWidth + plotWidth + rightPad
)

// scale maps seconds over [0, max] to x in the plot.
type scale struct{ max float64 }

// newScale returns a scale ending at a whole tick at or after end.
func newScale(end float64) scale {
	step := tickStep(end)
	return scale{max: math.Max(step, math.Ceil(end/step-1e-9)*step)}
}

func (s scale) x(sec float64) float64 {
	sec = math.Max(0, math.Min(sec, s.max))
	return round1(labelWidth + sec/s.max*plotWidth)
}

// tick is a mark of the time axis.
type tick struct {
	X     float64
	Label string
}

func (s scale) ticks() []tick {
	step := tickStep(s.max)
	var out []tick
	for i := 0; ; i++ {
		t := float64(i) * step
		if t > s.max+1e-9 {
			break
		}
		out = append(out, tick{X: s.x(t), Label: s.label(t)})
	}
	return out
}

// tickSteps are the axis steps, in seconds, from 1s to a week.
var tickSteps = []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800}

// tickStep picks the smallest step giving at most 12 ticks.
func tickStep(span float64) float64 {
	for _, step := range tickSteps {
		if span/step <= 12 {
			return step
		}
	}
	return math.Ceil(span/12/86400) * 86400
}

// label writes a time of the axis: seconds up to two minutes, then
// minutes, hours or days.
func (s scale) label(t float64) string {
	if s.max <= 120 {
		return fmt.Sprintf("%gs", t)
	}
	return Duration(t)
}

// Duration writes seconds as 45s, 2m, 1m30s, 3h, 2h15m or 2d.
func Duration(sec float64) string {
	d := int64(math.Round(sec))
	switch {
	case d < 60 && d > -60:
		if sec != math.Trunc(sec) && math.Abs(sec) < 10 {
			return fmt.Sprintf("%.1fs", sec)
		}
		return fmt.Sprintf("%ds", d)
	case d%86400 == 0:
		return fmt.Sprintf("%dd", d/86400)
	case d >= 86400:
		return fmt.Sprintf("%dd%dh", d/86400, d%86400/3600)
	case d%3600 == 0:
		return fmt.Sprintf("%dh", d/3600)
	case d >= 3600:
		return fmt.Sprintf("%dh%dm", d/3600, d%3600/60)
	case d%60 == 0:
		return fmt.Sprintf("%dm", d/60)
	}
	return fmt.Sprintf("%dm%ds", d/60, d%60)
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
