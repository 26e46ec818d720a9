package workloads

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// initialisedPod is a pod as KWOK leaves it for the controller.
func initialisedPod(restart corev1.RestartPolicy, at time.Time) *corev1.Pod {
	t := metav1.NewTime(at)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "demo", UID: "u1", Annotations: map[string]string{
			"localcluster.wavecd.io/requires": "redis.ns:6379", "localcluster.wavecd.io/backoff": "1s",
		}},
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending, PodIP: "10.244.0.5",
			Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}},
		},
	}
}

// want describes the pod after a step.
type want struct {
	at       time.Duration // time since the pod was initialised
	phase    phase
	podPhase corev1.PodPhase
	ready    bool
	restarts int32
	waiting  string // substring of the waiting message, if any
	after    time.Duration
}

// drive runs plan whenever it asks to and checks each written status.
func drive(t *testing.T, p *corev1.Pod, available func(time.Duration) bool, wants []want) {
	t.Helper()
	s, err := parseSettings(p.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	t0 := p.Status.Conditions[0].LastTransitionTime.Time
	now := t0
	for i, w := range wants {
		for range 100 {
			ph, since := classify(p)
			st := plan(p, s, ph, since, now, func(rs []Requirement) []Requirement {
				if available(now.Sub(t0)) {
					return nil
				}
				return rs
			})
			if st.status != nil {
				p.Status = *st.status
				checkStatus(t, i, p, st, w, now.Sub(t0))
				break
			}
			if st.after == 0 {
				t.Fatalf("step %d: plan waits for nothing at %s, want %+v", i, now.Sub(t0), w)
			}
			now = now.Add(st.after)
		}
	}
	if ph, since := classify(p); ph == phaseRunning {
		later := now.Add(time.Hour)
		if st := plan(p, s, ph, since, later, func(rs []Requirement) []Requirement { return rs }); st.status != nil {
			t.Fatalf("a running ready pod changed again: %+v", st.status)
		}
	}
}

func checkStatus(t *testing.T, i int, p *corev1.Pod, st step, w want, at time.Duration) {
	t.Helper()
	cs := p.Status.ContainerStatuses[0]
	ready := condition(p, corev1.PodReady)
	if at != w.at || st.next != w.phase || p.Status.Phase != w.podPhase || cs.RestartCount != w.restarts ||
		ready == nil || (ready.Status == corev1.ConditionTrue) != w.ready || st.after != w.after {
		t.Fatalf("step %d at %s: phase %s, pod %s, ready %v, restarts %d, after %s; want %+v",
			i, at, st.next, p.Status.Phase, ready, cs.RestartCount, st.after, w)
	}
	if w.waiting != "" && (cs.State.Waiting == nil || !strings.Contains(cs.State.Waiting.Message, w.waiting)) {
		t.Fatalf("step %d: waiting state %+v, want a message containing %q", i, cs.State.Waiting, w.waiting)
	}
	if w.restarts > 0 && w.phase == phaseBackOff {
		term := cs.LastTerminationState.Terminated
		if term == nil || term.ExitCode != 1 || term.Reason != "Error" || !strings.Contains(term.Message, "redis.ns:6379") {
			t.Fatalf("step %d: last termination %+v, want exit 1, Error, naming redis.ns:6379", i, term)
		}
		if cs.State.Waiting.Reason != "CrashLoopBackOff" {
			t.Fatalf("step %d: waiting reason %q, want CrashLoopBackOff", i, cs.State.Waiting.Reason)
		}
	}
}

func TestPlanCrashLoopsUntilServiceReady(t *testing.T) {
	sec := time.Second
	tests := map[string]struct {
		restart   corev1.RestartPolicy
		available func(time.Duration) bool
		wants     []want
	}{
		"service ready from the start": {
			restart: corev1.RestartPolicyAlways, available: func(time.Duration) bool { return true },
			wants: []want{{at: sec, phase: phaseRunning, podPhase: corev1.PodRunning, ready: true}},
		},
		"crash loop with growing back-off, then ready": {
			restart: corev1.RestartPolicyAlways, available: func(at time.Duration) bool { return at >= 6*sec },
			wants: []want{
				{at: sec, phase: phaseFailingRun, podPhase: corev1.PodRunning, after: sec},
				{at: 2 * sec, phase: phaseBackOff, podPhase: corev1.PodRunning, restarts: 1, after: sec,
					waiting: "back-off 1s restarting failed container=main pod=app_demo(u1)"},
				{at: 3 * sec, phase: phaseFailingRun, podPhase: corev1.PodRunning, restarts: 1, after: sec},
				{at: 4 * sec, phase: phaseBackOff, podPhase: corev1.PodRunning, restarts: 2, after: 2 * sec, waiting: "back-off 2s"},
				{at: 6 * sec, phase: phaseRunning, podPhase: corev1.PodRunning, ready: true, restarts: 2},
			},
		},
		"service ready during the failing run saves it": {
			restart: corev1.RestartPolicyAlways, available: func(at time.Duration) bool { return at >= 2*sec },
			wants: []want{
				{at: sec, phase: phaseFailingRun, podPhase: corev1.PodRunning, after: sec},
				{at: 2 * sec, phase: phaseRunning, podPhase: corev1.PodRunning, ready: true},
			},
		},
		"restartPolicy Never fails once": {
			restart: corev1.RestartPolicyNever, available: func(time.Duration) bool { return false },
			wants: []want{
				{at: sec, phase: phaseFailingRun, podPhase: corev1.PodRunning, after: sec},
				{at: 2 * sec, phase: phaseFailed, podPhase: corev1.PodFailed},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := initialisedPod(tc.restart, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			drive(t, p, tc.available, tc.wants)
		})
	}
}

func TestParseSettingsNamesTheAnnotation(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		wantErr     string
	}{
		"valid":         {annotations: map[string]string{"localcluster.wavecd.io/requires": "a.b:1"}},
		"bad requires":  {annotations: map[string]string{"localcluster.wavecd.io/requires": "a:1"}, wantErr: "localcluster.wavecd.io/requires"},
		"bad backoff":   {annotations: map[string]string{"localcluster.wavecd.io/requires": "a.b:1", "localcluster.wavecd.io/backoff": "x"}, wantErr: "localcluster.wavecd.io/backoff"},
		"bad readiness": {annotations: map[string]string{"localcluster.wavecd.io/requires": "a.b:1", "pod-ready.stage.kwok.x-k8s.io/delay": "x"}, wantErr: "pod-ready.stage.kwok.x-k8s.io/delay"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parseSettings(tc.annotations)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
