package kubelet

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/deps"
)

// written is one status the kubelet wrote, summarised.
type written struct {
	At         string `json:"at"`
	Pod        string `json:"pod"`
	Containers string `json:"containers"`
	Message    string `json:"message,omitempty"`
}

type lifecycleCase struct {
	Pod      corev1.Pod        `json:"pod"`
	Profile  []config.Workload `json:"profile"`
	Scale    float64           `json:"scale"`
	Services map[string]string `json:"services"` // namespace/name -> ready from, or "never"
	Until    string            `json:"until"`
	Want     []written         `json:"want"`
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func TestPlanLifecycle(t *testing.T) {
	var fixture struct {
		Cases map[string]lifecycleCase `json:"cases"`
	}
	b, err := os.ReadFile("testdata/lifecycle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &fixture); err != nil {
		t.Fatal(err)
	}
	for name, tc := range fixture.Cases {
		t.Run(name, func(t *testing.T) {
			got := drive(t, tc)
			for i := range got {
				// A wanted message is a part of the one written.
				if i < len(tc.Want) && strings.Contains(got[i].Message, tc.Want[i].Message) {
					got[i].Message = tc.Want[i].Message
				}
			}
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("statuses written (-want +got):\n%s", diff)
			}
		})
	}
}

// drive admits the pod at t0 and runs Plan whenever it asks to, or when
// a Service it waits on turns ready, until the horizon; it returns every
// status written.
func drive(t *testing.T, tc lifecycleCase) []written {
	t.Helper()
	p := tc.Pod.DeepCopy()
	p.UID = "u1"
	if p.Name == "" {
		p.Name, p.Namespace = "app", "default"
	}
	ready := map[string]time.Duration{}
	for k, v := range tc.Services {
		if v == "never" {
			ready[k] = 1 << 62
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		ready[k] = d
	}
	s, err := SettingsFor(p, tc.Profile, tc.Scale)
	if err != nil {
		t.Fatal(err)
	}
	until := 5 * time.Minute
	if tc.Until != "" {
		until, _ = time.ParseDuration(tc.Until)
	}
	memo := &Memo{Admitted: t0}
	p.Status = *Admit(p, "10.244.0.7", "10.0.0.1", t0)
	var out []written
	now := t0
	for range 200 {
		in := Input{Pod: p, Settings: s, Now: now, Memo: memo,
			Needs: func(c *corev1.Container) []deps.Requirement {
				rs := deps.Infer(p.Namespace, c, readyMap(ready))
				if !isInit(p, c) {
					rs = append(rs, s.Requires...)
				}
				return rs
			},
			Unmet: func(rs []deps.Requirement) []Unmet {
				var out []Unmet
				for _, r := range rs {
					if d, ok := ready[r.Key()]; !ok || now.Sub(t0) < d {
						out = append(out, Unmet{Requirement: r, Why: "no ready endpoint"})
					}
				}
				return out
			},
		}
		step := Plan(in)
		if len(out) == 0 { // admitted and planned in one write
			if step.Status != nil {
				p.Status = *step.Status
			}
			out = append(out, summary(p, 0))
			continue
		}
		if step.Status != nil {
			p.Status = *step.Status
			out = append(out, summary(p, now.Sub(t0)))
			continue // the write brings the pod back at once
		}
		next := step.After
		for _, r := range step.WaitsOn {
			if d := ready[r.Key()] - now.Sub(t0); d > 0 && (next == 0 || d < next) {
				next = d
			}
		}
		if next == 0 || now.Add(next).Sub(t0) > until {
			return out
		}
		now = now.Add(next)
	}
	t.Fatalf("no end after 200 steps: %v", out)
	return nil
}

type readyMap map[string]time.Duration

func (m readyMap) Lookup(ns, name string) ([]int32, bool) {
	_, ok := m[ns+"/"+name]
	return nil, ok
}

func isInit(p *corev1.Pod, c *corev1.Container) bool {
	for i := range p.Spec.InitContainers {
		if &p.Spec.InitContainers[i] == c {
			return true
		}
	}
	return false
}

func summary(p *corev1.Pod, at time.Duration) written {
	w := written{At: at.String(), Pod: string(p.Status.Phase)}
	if c := Condition(p, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
		w.Pod += " Ready"
	}
	var parts []string
	for _, cs := range p.Status.InitContainerStatuses {
		parts = append(parts, "init/"+cs.Name+"="+state(cs))
	}
	for _, cs := range p.Status.ContainerStatuses {
		parts = append(parts, cs.Name+"="+state(cs))
		if term := cs.LastTerminationState.Terminated; term != nil {
			w.Message = term.Message
		}
		if term := cs.State.Terminated; term != nil && term.Message != "" {
			w.Message = term.Message
		}
	}
	w.Containers = strings.Join(parts, " ")
	return w
}

func state(cs corev1.ContainerStatus) string {
	var s string
	switch {
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == ReasonCrashLoopBackOff:
		return fmt.Sprintf("back-off(%d)", cs.RestartCount)
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == ReasonPodInitializing:
		return "initializing"
	case cs.State.Waiting != nil:
		return "creating"
	case cs.State.Terminated != nil:
		return fmt.Sprintf("exited(%d)", cs.State.Terminated.ExitCode)
	case cs.Ready:
		s = "ready"
	case cs.Started != nil && *cs.Started:
		s = "started"
	default:
		s = "running"
	}
	if cs.RestartCount > 0 {
		s += fmt.Sprintf("(%d)", cs.RestartCount)
	}
	return s
}
