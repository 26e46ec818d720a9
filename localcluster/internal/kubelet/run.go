package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// course is how one run of a container goes, from its start on. Zero
// times never come.
type course struct {
	started time.Time // Started turns true (the startup probe passed)
	ready   time.Time // Ready turns true
	check   time.Time // missing Services are looked at again: exit unless ready
	end     time.Time // the container exits on its own
	exit    Exit      // how, at end
	event   string    // the probe failure behind an exit, for an Unhealthy event
}

// plan works out the course of container c's run that started at start,
// in a pod admitted at admitted. servicesMet: its Services had a ready
// endpoint when it started.
func plan(c *corev1.Container, s Settings, admitted, start time.Time, servicesMet bool) course {
	var r course
	if s.ReadyAt != nil {
		r.started, r.ready = start, start // the annotation's delay came before the start
	} else {
		r = probed(c, s, admitted, start)
	}
	if !servicesMet {
		r.check = start.Add(s.CrashAfter)
		if !r.ready.IsZero() && r.ready.Before(r.check) {
			r.ready = r.check // not Ready before its Services are
		}
	}
	if s.RunTime != nil {
		if end := start.Add(*s.RunTime); r.end.IsZero() || end.Before(r.end) {
			r.end, r.exit, r.event = end, exitWith(s.ExitCode), ""
		}
	}
	if !r.end.IsZero() {
		if !r.ready.IsZero() && !r.ready.Before(r.end) {
			r.ready = time.Time{}
		}
		if !r.started.IsZero() && r.started.After(r.end) {
			r.started = time.Time{}
		}
		if !r.check.IsZero() && r.check.After(r.end) {
			r.check = time.Time{} // a failed connection ends a run at the latest when it would end
		}
	}
	return r
}

// probed is the course the container's probes give it: Started after
// the startup probe, Ready after the readiness probe, killed when a
// startup or liveness probe gives up before the container answers.
func probed(c *corev1.Container, s Settings, admitted, start time.Time) course {
	var r course
	up := start.Add(s.ReadyAfter)
	startup := probeOf("Startup", c.StartupProbe, s.Scale)
	readiness := probeOf("Readiness", c.ReadinessProbe, s.Scale)
	liveness := probeOf("Liveness", c.LivenessProbe, s.Scale)
	r.started = start
	if startup != nil {
		o := startup.run(admitted, start, start, up, false, true)
		if !o.fail.IsZero() {
			return course{end: o.fail, exit: killed(), event: startup.message(o, s.ReadyAfter)}
		}
		r.started = o.pass
	}
	switch {
	case readiness != nil:
		r.ready = readiness.run(admitted, start, r.started, up, true, false).pass
	case r.started.Before(up):
		r.ready = up // no probe: Ready once it would answer one
	default:
		r.ready = r.started
	}
	if liveness != nil && startup == nil {
		// Liveness probes run once the container is Started; with a
		// startup probe it is Started only once it answers.
		if o := liveness.run(admitted, start, r.started, up, false, true); !o.fail.IsZero() {
			r.end, r.exit, r.event = o.fail, killed(), liveness.message(o, s.ReadyAfter)
		}
	}
	return r
}

// killed is how a container the kubelet killed after a failed probe ends.
func killed() Exit { return Exit{Code: exitCodeKilled, Reason: ReasonError} }
