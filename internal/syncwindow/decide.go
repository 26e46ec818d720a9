package syncwindow

import (
	"fmt"
	"strings"
	"time"
)

// horizon bounds how far ahead Evaluate looks for the end of a block.
const horizon = 366 * 24 * time.Hour

// maxSteps bounds the edges Evaluate walks while looking for that end.
const maxSteps = 5000

// Decision is whether an app may sync now, and if not, why and until when.
type Decision struct {
	// Allowed says the sync may start.
	Allowed bool
	// Blocking lists the windows in the way: the open deny windows, or the
	// app's allow windows when none of them is open.
	Blocking []*Window
	// Until is the first instant the sync may start, when it is blocked;
	// zero when it is allowed, or stays blocked for longer than a year.
	Until time.Time
}

// Applicable returns the windows that apply to the target, in order.
func Applicable(windows []*Window, t Target) []*Window {
	var out []*Window
	for _, w := range windows {
		if w.Matches(t) {
			out = append(out, w)
		}
	}
	return out
}

// Evaluate decides whether a sync of the target may start at now; manual
// says a user asked for it (automated syncs never pass a block).
func Evaluate(windows []*Window, t Target, now time.Time, manual bool) Decision {
	applicable := Applicable(windows, t)
	allowed, blocking := decide(applicable, now, manual)
	if allowed {
		return Decision{Allowed: true}
	}
	return Decision{Blocking: blocking, Until: until(applicable, now, manual)}
}

// decide applies Argo CD's rules to the windows that apply to an app.
func decide(applicable []*Window, at time.Time, manual bool) (bool, []*Window) {
	var openDeny, allows []*Window
	openAllow := false
	for _, w := range applicable {
		active := w.Active(at)
		switch {
		case w.Spec.Kind == KindDeny && active:
			openDeny = append(openDeny, w)
		case w.Spec.Kind == KindAllow:
			allows = append(allows, w)
			openAllow = openAllow || active
		}
	}
	if len(openDeny) > 0 {
		if manual && all(openDeny, func(w *Window) bool { return w.Spec.ManualSync }) {
			return true, nil
		}
		return false, openDeny
	}
	if len(allows) == 0 || openAllow {
		return true, nil
	}
	if manual && !all(allows, func(w *Window) bool { return !w.Spec.ManualSync }) {
		return true, nil
	}
	return false, allows
}

func all(ws []*Window, pred func(*Window) bool) bool {
	for _, w := range ws {
		if !pred(w) {
			return false
		}
	}
	return true
}

// until walks the windows' edges after now and returns the first at which
// the sync may start; zero when none comes within the horizon.
func until(applicable []*Window, now time.Time, manual bool) time.Time {
	t, limit := now, now.Add(horizon)
	for range maxSteps {
		var next time.Time
		for _, w := range applicable {
			if c := w.NextChange(t); !c.IsZero() && (next.IsZero() || c.Before(next)) {
				next = c
			}
		}
		if next.IsZero() || next.After(limit) {
			return time.Time{}
		}
		if ok, _ := decide(applicable, next, manual); ok {
			return next
		}
		t = next
	}
	return time.Time{}
}

// Message explains a blocked decision in one line, for a status condition:
// "automated sync blocked by sync window deny:0 22 * * *:1h until
// 2026-01-05T23:00:00Z".
func (d Decision) Message(manual bool) string {
	if d.Allowed {
		return ""
	}
	who := "automated"
	if manual {
		who = "manual"
	}
	labels := make([]string, len(d.Blocking))
	for i, w := range d.Blocking {
		labels[i] = w.Label()
	}
	msg := fmt.Sprintf("%s sync blocked by sync window %s", who, strings.Join(labels, ", "))
	if len(d.Blocking) > 0 && d.Blocking[0].Spec.Kind == KindAllow {
		msg = fmt.Sprintf("%s sync blocked by sync window: outside %s", who, strings.Join(labels, ", "))
	}
	if d.Until.IsZero() {
		return msg + " (it stays closed for more than a year)"
	}
	return msg + " until " + d.Until.UTC().Format(time.RFC3339)
}
