package kubelet

import (
	"fmt"
	"time"
)

// BackoffAnnotation sets the base of a pod's restart back-off ("1s"); the
// back-off doubles per crash up to 30 times the base, as the kubelet's 10 s
// doubles up to 300 s.
const BackoffAnnotation = "localcluster.wavecd.io/backoff"

// Backoff is a container restart back-off schedule.
type Backoff struct {
	Base, Max time.Duration
}

// KubeletBackoff is the kubelet's schedule: 10 s, doubling, capped at 300 s.
var KubeletBackoff = Backoff{Base: 10 * time.Second, Max: 300 * time.Second}

// ParseBackoff parses the back-off annotation's value; "" gives the
// kubelet's schedule.
func ParseBackoff(value string) (Backoff, error) {
	if value == "" {
		return KubeletBackoff, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return Backoff{}, fmt.Errorf("annotation %s: %q is not a positive duration such as 1s", BackoffAnnotation, value)
	}
	return Backoff{Base: d, Max: 30 * d}, nil
}

// Delay is the back-off after the given number of crashes (1 or more).
func (b Backoff) Delay(crashes int32) time.Duration {
	d := b.Base
	for i := int32(1); i < crashes && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Scaled returns the schedule with both bounds multiplied by scale (a
// scale of 0 or less leaves it as it is).
func (b Backoff) Scaled(scale float64) Backoff {
	if scale <= 0 {
		return b
	}
	return Backoff{Base: scaled(b.Base, scale), Max: scaled(b.Max, scale)}
}

func scaled(d time.Duration, scale float64) time.Duration {
	if scale <= 0 {
		return d
	}
	return time.Duration(float64(d) * scale)
}
