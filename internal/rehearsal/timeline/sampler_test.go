package timeline

import (
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

func TestSamplerRecord(t *testing.T) {
	state := func(nodes, ready, pending, running int) podNodeState {
		return podNodeState{Sample: report.Sample{Nodes: nodes, ReadyNodes: ready, Pending: pending}, running: running, total: pending + running}
	}
	tests := map[string]struct {
		states []podNodeState // one a second, from 1s
		// activity is the second of the last activity; samples how many
		// samples the sampler kept.
		activity, samples int
	}{
		"every count new": {
			states:   []podNodeState{state(2, 0, 4, 0), state(3, 1, 2, 2), state(4, 2, 0, 4)},
			activity: 3, samples: 3,
		},
		"the same counts again are no sample": {
			states:   []podNodeState{state(2, 0, 4, 0), state(2, 0, 4, 0), state(2, 0, 4, 0)},
			activity: 1, samples: 1,
		},
		"pods that come and go in a loop are samples but no activity": {
			states:   []podNodeState{state(2, 0, 2, 0), state(2, 0, 4, 0), state(2, 0, 2, 0), state(2, 0, 4, 0), state(2, 0, 3, 0), state(2, 0, 2, 0)},
			activity: 5, samples: 6,
		},
		"a crash loop after the last new state": {
			states:   []podNodeState{state(2, 2, 0, 3), state(2, 2, 0, 2), state(2, 2, 0, 3), state(2, 2, 0, 2)},
			activity: 2, samples: 4,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := &Sampler{start: start, activity: start, seen: map[podNodeState]bool{}}
			for i, st := range tc.states {
				now := start.Add(time.Duration(i+1) * time.Second)
				st.At = float64(i + 1)
				s.record(now, st)
			}
			if got := int(s.lastActivity().Sub(start) / time.Second); got != tc.activity {
				t.Errorf("last activity at %ds, want %ds", got, tc.activity)
			}
			if len(s.samples) != tc.samples {
				t.Errorf("%d samples, want %d: %v", len(s.samples), tc.samples, s.samples)
			}
		})
	}
}
