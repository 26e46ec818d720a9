package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probe is a probe's timing, scaled.
type probe struct {
	kind             string // Startup, Readiness, Liveness
	delay, period    time.Duration
	success, failure int32
}

// probeOf returns the timing of p with the API's defaults (period 10 s,
// success 1, failure 3), scaled; nil when there is no probe.
func probeOf(kind string, p *corev1.Probe, scale float64) *probe {
	if p == nil {
		return nil
	}
	pr := &probe{kind: kind, delay: scaled(time.Duration(p.InitialDelaySeconds)*time.Second, scale),
		period: scaled(10*time.Second, scale), success: 1, failure: 3}
	if p.PeriodSeconds > 0 {
		pr.period = scaled(time.Duration(p.PeriodSeconds)*time.Second, scale)
	}
	if p.SuccessThreshold > 0 {
		pr.success = p.SuccessThreshold
	}
	if p.FailureThreshold > 0 {
		pr.failure = p.FailureThreshold
	}
	if pr.period <= 0 {
		pr.period = time.Millisecond
	}
	return pr
}

// tick is the first run of the probe's worker, started when the pod was
// admitted and ticking every period, at or after t.
func (p *probe) tick(admitted, t time.Time) time.Time {
	if !t.After(admitted) {
		return admitted.Add(p.period)
	}
	n := (t.Sub(admitted) + p.period - 1) / p.period
	return admitted.Add(n * p.period)
}

// outcome is how a probe that succeeds from up on goes: it passes at
// pass, or fails failureThreshold times in a row and gives up at fail.
type outcome struct {
	pass, fail time.Time
	failures   int32
}

// run probes from the first run at or after from (and no sooner than
// initialDelaySeconds after the container's start) until it passes
// successThreshold times in a row, or, for a probe that kills (startup,
// liveness), fails failureThreshold times in a row. immediate is an extra
// run at from itself (the readiness probe's run when the container starts
// or turns Started).
func (p *probe) run(admitted, start, from, up time.Time, immediate, kills bool) outcome {
	earliest := start.Add(p.delay)
	if from.Before(earliest) {
		from, immediate = earliest, false
	}
	t := from
	if !immediate {
		t = p.tick(admitted, from)
	}
	var o outcome
	if kills {
		for ; t.Before(up); t = p.tick(admitted, t.Add(time.Nanosecond)) {
			if o.failures++; o.failures >= p.failure {
				o.fail = t
				return o
			}
		}
	} else if t.Before(up) {
		t = p.tick(admitted, up)
	}
	for i := int32(1); i < p.success; i++ {
		t = p.tick(admitted, t.Add(time.Nanosecond))
	}
	o.pass = t
	return o
}

// message is the kubelet event text of a probe that gave up.
func (p *probe) message(o outcome, up time.Duration) string {
	return fmt.Sprintf("%s probe failed %d times (the container answers %s after its start)", p.kind, o.failures, up)
}
