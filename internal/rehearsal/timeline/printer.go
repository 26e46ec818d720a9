package timeline

import (
	"fmt"
	"io"
	"time"
)

// Printer writes timeline lines stamped with the time since Start, and
// with a Scale other than 1, the time at full scale as well.
type Printer struct {
	Out   io.Writer
	Start time.Time
	Scale float64
}

// Sayf prints a line of its own, stamped now.
func (p *Printer) Sayf(format string, args ...any) {
	p.Print(Line{at: time.Since(p.Start), text: fmt.Sprintf(format, args...)})
}

// Print prints a line of the tracker.
func (p *Printer) Print(l Line) {
	l.scale = p.Scale
	fmt.Fprintln(p.Out, l.String())
}
