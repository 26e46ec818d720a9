package destination

import (
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/kube"
)

// TestCapabilitiesStale: discovery is asked again after a CRD changed
// since it last listed (watched), after a while (unwatched), and after a
// failure once readRetry passed.
func TestCapabilitiesStale(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	watch := &kube.CRDWatch{}
	for name, tc := range map[string]struct {
		c    *capabilities
		now  time.Time
		want bool
	}{
		"never discovered":                     {c: &capabilities{}, now: t0, want: true},
		"watched, nothing changed":             {c: &capabilities{discoveredAt: t0, crds: watch}, now: t0.Add(time.Hour)},
		"watched, a CRD changed before":        {c: &capabilities{discoveredAt: t0, crds: watch, changed: t0.Add(-time.Millisecond)}, now: t0.Add(time.Second)},
		"watched, a CRD changed since":         {c: &capabilities{discoveredAt: t0, crds: watch, changed: t0.Add(time.Millisecond)}, now: t0.Add(time.Second), want: true},
		"unwatched, fresh":                     {c: &capabilities{discoveredAt: t0}, now: t0.Add(unwatchedMaxAge)},
		"unwatched, old":                       {c: &capabilities{discoveredAt: t0}, now: t0.Add(unwatchedMaxAge + time.Millisecond), want: true},
		"failed, retried after readRetry":      {c: &capabilities{discoveredAt: t0, failed: true, crds: watch}, now: t0.Add(readRetry + time.Millisecond), want: true},
		"failed, not retried before readRetry": {c: &capabilities{discoveredAt: t0, failed: true, crds: watch, changed: t0.Add(time.Second)}, now: t0.Add(2 * time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.c.stale(tc.now); got != tc.want {
				t.Errorf("stale = %v, want %v", got, tc.want)
			}
		})
	}
}
