package syncwindow

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/glob"
)

// Window kinds.
const (
	KindAllow = "allow"
	KindDeny  = "deny"
)

// maxMerge bounds how many back-to-back activations End follows before it
// gives up: a window that never closes (every minute, open an hour) has no
// end.
const maxMerge = 1500

// parser reads Argo CD's five-field cron schedules.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Window is one parsed sync window.
type Window struct {
	// Spec is the window as the project declares it.
	Spec     v1alpha1.SyncWindow
	schedule cron.Schedule
	duration time.Duration
	location *time.Location
}

// Parse checks and parses one window.
func Parse(spec v1alpha1.SyncWindow) (*Window, error) {
	w := &Window{Spec: spec, location: time.UTC}
	if spec.Kind != KindAllow && spec.Kind != KindDeny {
		return nil, fmt.Errorf("sync window %s: kind must be %s or %s", label(spec), KindAllow, KindDeny)
	}
	s, err := parser.Parse(spec.Schedule)
	if err != nil {
		return nil, fmt.Errorf("sync window %s: schedule: %w", label(spec), err)
	}
	w.schedule = s
	if w.duration, err = time.ParseDuration(spec.Duration); err != nil {
		return nil, fmt.Errorf("sync window %s: duration: %w", label(spec), err)
	}
	if w.duration <= 0 {
		return nil, fmt.Errorf("sync window %s: duration must be positive", label(spec))
	}
	if spec.TimeZone != "" {
		if w.location, err = time.LoadLocation(spec.TimeZone); err != nil {
			return nil, fmt.Errorf("sync window %s: time zone: %w", label(spec), err)
		}
	}
	return w, nil
}

// label names a window the way Argo CD's CLI does: kind:schedule:duration.
func label(s v1alpha1.SyncWindow) string { return s.Kind + ":" + s.Schedule + ":" + s.Duration }

// Label names the window the way Argo CD's CLI does: kind:schedule:duration.
func (w *Window) Label() string { return label(w.Spec) }

// ParseAll parses every window of a project, in order.
func ParseAll(specs v1alpha1.SyncWindows) ([]*Window, error) {
	out := make([]*Window, 0, len(specs))
	var errs []error
	for _, s := range specs {
		if s == nil {
			continue
		}
		w, err := Parse(*s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, w)
	}
	return out, errors.Join(errs...)
}

// Location is the time zone the schedule is read in.
func (w *Window) Location() *time.Location { return w.location }

// next is the first activation strictly after t (zero when none comes
// within the cron library's five-year search).
func (w *Window) next(t time.Time) time.Time {
	return w.schedule.Next(t.In(w.location))
}

// Active reports whether the window is open at t: some activation s has
// s <= t < s+duration.
func (w *Window) Active(t time.Time) bool {
	s := w.next(t.Add(-w.duration))
	return !s.IsZero() && !s.After(t)
}

// End is when the opening that contains t closes, following activations
// that start before the previous one ends; zero when t is outside the
// window or the window never closes.
func (w *Window) End(t time.Time) time.Time {
	s := w.next(t.Add(-w.duration))
	if s.IsZero() || s.After(t) {
		return time.Time{}
	}
	end := s.Add(w.duration)
	for range maxMerge {
		n := w.next(end.Add(-time.Nanosecond))
		if n.IsZero() || n.After(end) {
			return end
		}
		end = n.Add(w.duration)
	}
	return time.Time{}
}

// NextChange is the first instant after t at which the window opens or
// closes; zero when it never does.
func (w *Window) NextChange(t time.Time) time.Time {
	if w.Active(t) {
		return w.End(t)
	}
	return w.next(t)
}

// Target is what windows match an app by.
type Target struct {
	// App is the Application's name.
	App string
	// Namespace is the destination namespace.
	Namespace string
	// Server and Cluster are the destination's server URL and cluster
	// name, resolved from whichever of the two the app names.
	Server, Cluster string
}

// Matches reports whether the window applies to the target.
func (w *Window) Matches(t Target) bool {
	lists := []struct {
		patterns []string
		values   []string
	}{
		{w.Spec.Applications, []string{t.App}},
		{w.Spec.Namespaces, []string{t.Namespace}},
		{w.Spec.Clusters, []string{t.Server, t.Cluster}},
	}
	set, matched := 0, 0
	for _, l := range lists {
		if len(l.patterns) == 0 {
			continue
		}
		set++
		if anyMatch(l.patterns, l.values) {
			matched++
		}
	}
	if w.Spec.UseAndOperator {
		return set > 0 && matched == set
	}
	return matched > 0
}

// anyMatch reports whether a pattern matches a value, as Argo CD matches a
// window's applications, namespaces and clusters: wildcards, without
// negation.
func anyMatch(patterns, values []string) bool {
	for _, p := range patterns {
		for _, v := range values {
			if v != "" && glob.Match(p, v) {
				return true
			}
		}
	}
	return false
}
