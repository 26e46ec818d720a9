package timeline

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// sampleEvery is how often a run counts nodes and pods.
const sampleEvery = 500 * time.Millisecond

// Sampler counts the cluster's nodes and pending pods over a run, keeping
// a sample whenever a count changes, and notes the last time the counts
// reached a state the run had not been in before: the judge gives a
// provisioner at work its time, but not pods that come and go in a loop.
type Sampler struct {
	client kubernetes.Interface
	start  time.Time

	mu       sync.Mutex
	samples  []report.Sample
	last     podNodeState
	seen     map[podNodeState]bool // states the run was in, At zero
	activity time.Time
}

// podNodeState is what the sampler compares between two looks.
type podNodeState struct {
	report.Sample
	running, total int
}

// NewSampler returns a sampler whose times count from start.
func NewSampler(client kubernetes.Interface, start time.Time) *Sampler {
	return &Sampler{client: client, start: start, activity: start, seen: map[podNodeState]bool{}}
}

// Run samples until ctx ends.
func (s *Sampler) Run(ctx context.Context) {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		s.look(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Sampler) look(ctx context.Context) {
	nodes, err := s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	now := time.Now()
	st := podNodeState{Sample: report.Sample{At: round1(now.Sub(s.start).Seconds()), Nodes: len(nodes.Items)}, total: len(pods.Items)}
	for i := range nodes.Items {
		if NodeReady(&nodes.Items[i]) {
			st.ReadyNodes++
		}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.Status.Phase == corev1.PodPending:
			st.Pending++
			if Unschedulable(p) != "" {
				st.Unschedulable++
			}
		case p.Status.Phase == corev1.PodRunning && PodReady(p):
			st.running++
		}
	}
	s.record(now, st)
}

// record keeps st as a sample when a count differs from the last sample,
// and counts it as activity only when the run was never in that state
// before: an operator that recreates the pods a failure removes, or a
// crash loop, makes the counts go round, which is no progress and must
// not keep a stalled run from being judged.
func (s *Sampler) record(now time.Time, st podNodeState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.last
	prev.At = st.At
	if len(s.samples) > 0 && prev == st {
		return
	}
	s.last = st
	s.samples = append(s.samples, st.Sample)
	key := st
	key.At = 0
	if !s.seen[key] {
		s.seen[key] = true
		s.activity = now
	}
}

// lastActivity is when nodes or pods last changed.
func (s *Sampler) lastActivity() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.activity
}

// result returns the samples, with a last one at end.
func (s *Sampler) result(end float64) []report.Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]report.Sample{}, s.samples...)
	if n := len(out); n > 0 && out[n-1].At < end {
		last := out[n-1]
		last.At = end
		out = append(out, last)
	}
	return out
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
