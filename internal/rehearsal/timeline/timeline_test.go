package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// appAt is an Application named name at second sec; edit shapes its status.
func appAt(name string, sec float64, edit func(*v1alpha1.Application)) Observation {
	a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"}}
	a.Spec.Destination.Namespace = name
	a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	if edit != nil {
		edit(a)
	}
	return Observation{at: t0.Add(time.Duration(sec * float64(time.Second))), app: a}
}

func status(sync, health string) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) {
		a.Status.Sync.Status = v1alpha1.SyncStatusCode(sync)
		a.Status.Health.Status = v1alpha1.HealthStatusCode(health)
		now := metav1.NewTime(t0.Add(time.Minute))
		a.Status.ReconciledAt = &now
	}
}

func running(message, state string, then ...func(*v1alpha1.Application)) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) {
		a.Status.OperationState = &v1alpha1.OperationState{
			Phase: v1alpha1.OperationRunning, Message: message, StartedAt: metav1.NewTime(t0),
			Operation: v1alpha1.Operation{InitiatedBy: v1alpha1.OperationInitiator{Automated: true}},
		}
		if state != "" {
			a.Status.OperationState.WavecdState = &apiextensionsv1.JSON{Raw: []byte(state)}
		}
		for _, f := range then {
			f(a)
		}
	}
}

func both(fs ...func(*v1alpha1.Application)) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) {
		for _, f := range fs {
			f(a)
		}
	}
}

// manual turns automated sync off.
func manual(a *v1alpha1.Application) { a.Spec.SyncPolicy = nil }

// failed ends the app's sync with message.
func failed(message string) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) {
		a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationFailed, Message: message, StartedAt: metav1.NewTime(t0)}
	}
}

func podAt(sec float64, restarts int32, ready bool, terminated string) Observation {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9-x", Namespace: "web", Labels: map[string]string{"pod-template-hash": "7d9"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9", Controller: ptr(true)}}}}
	cs := corev1.ContainerStatus{Name: "web", RestartCount: restarts}
	if terminated != "" {
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: terminated}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}}
	return Observation{at: t0.Add(time.Duration(sec * float64(time.Second))), pod: p}
}

func ptr[T any](v T) *T { return &v }

// timelineCases are watch events and the timeline they print.
var timelineCases = map[string]struct {
	events []Observation
	want   []string
}{
	"an app is created, syncs and turns healthy": {
		events: []Observation{
			appAt("web", 1, func(a *v1alpha1.Application) { a.Annotations = map[string]string{hook.AnnotationSyncWave: "1"} }),
			appAt("web", 1.5, status("OutOfSync", "Missing")),
			appAt("web", 2, both(status("OutOfSync", "Missing"), running("", `{"syncPhase":"PreSync","wave":-1}`))),
			appAt("web", 2.5, both(status("OutOfSync", "Missing"), running("", `{"syncPhase":"Sync","wave":0}`))),
			appAt("web", 3, both(status("Synced", "Progressing"), running("waiting for Deployment web/web: 0/2 ready", `{"syncPhase":"Sync","wave":0}`))),
			appAt("web", 3.2, both(status("Synced", "Progressing"), running("waiting for Deployment web/web: 0/2 ready", `{"syncPhase":"Sync","wave":0}`))),
			appAt("web", 9, both(status("Synced", "Healthy"), func(a *v1alpha1.Application) {
				a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationSucceeded, Message: "successfully synced (all tasks run)", StartedAt: metav1.NewTime(t0)}
			})),
		},
		want: []string{
			"[  1.0s] web      created (wave 1)",
			"[  1.5s] web      OutOfSync  Missing",
			"[  2.0s] web      sync started (automated)",
			"[  2.0s] web      PreSync wave -1 starts",
			"[  2.5s] web      wave 0 starts",
			"[  3.0s] web      Synced  Progressing",
			"[  3.0s] web      Progressing  wave 0 waits on Deployment web/web: 0/2 ready",
			"[  9.0s] web      Synced  Healthy",
			"[  9.0s] web      sync succeeded",
		},
	},
	"a failed sync, a condition, what a settled sync still waits on": {
		events: []Observation{
			appAt("web", 1, both(status("OutOfSync", "Missing"), running("Retrying attempt #1 at 10:00:00: boom", ""))),
			appAt("web", 2, both(status("OutOfSync", "Degraded"), func(a *v1alpha1.Application) {
				a.Status.Health.Message = "pods failing"
				a.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationFailed, Message: "boom", StartedAt: metav1.NewTime(t0)}
				a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: "boom"}}
				a.Status.Resources = []v1alpha1.ResourceStatus{
					{Kind: "Service", Namespace: "web", Name: "web", Health: &v1alpha1.HealthStatus{Status: "Healthy"}},
					{Kind: "Deployment", Namespace: "web", Name: "web", Health: &v1alpha1.HealthStatus{Status: "Degraded", Message: "crash\nloop"}},
				}
			})),
			appAt("web", 3, status("OutOfSync", "Healthy")),
		},
		want: []string{
			"[  1.0s] web      created",
			"[  1.0s] web      OutOfSync  Missing",
			"[  1.0s] web      sync started (automated)",
			"[  1.0s] web      sync: Retrying attempt #1 at 10:00:00: boom",
			"[  2.0s] web      OutOfSync  Degraded: pods failing",
			"[  2.0s] web      sync failed: boom",
			"[  2.0s] web      Degraded  waits on Deployment web/web: Degraded: crash",
			"[  2.0s] web      SyncError: boom",
			"[  3.0s] web      OutOfSync  Healthy",
			"[  3.0s] web      SyncError cleared",
		},
	},
	"a pod of an app crashes and recovers; unchanged pods say nothing": {
		events: []Observation{
			appAt("web", 1, nil),
			podAt(2, 0, false, ""),
			podAt(3, 1, false, "needs Service cache/redis:6379 (named in its args), no ready endpoint"),
			podAt(3.5, 1, false, "needs Service cache/redis:6379 (named in its args), no ready endpoint"),
			podAt(5, 2, false, "again"),
			podAt(9, 2, true, "again"),
		},
		want: []string{
			"[  1.0s] web      created",
			"[  3.0s] pod web/web-7d9-x crashed: needs Service cache/redis:6379 (named in its args), no ready endpoint (exit code 1, CrashLoopBackOff, restarts=1)",
			"[  5.0s] pod web/web-7d9-x crashed: again (exit code 1, CrashLoopBackOff, restarts=2)",
			"[  9.0s] pod web/web-7d9-x ready after 2 restarts",
		},
	},
	"a manual app says how to sync it, once, and not while its sync runs or after it failed": {
		events: []Observation{
			appAt("root", 1, both(manual, status("OutOfSync", "Missing"))),
			appAt("root", 2, both(manual, status("OutOfSync", "Progressing"))),
			appAt("root", 3, both(manual, status("OutOfSync", "Progressing"), running("", ""))),
			appAt("root", 4, both(manual, status("OutOfSync", "Progressing"), failed("dry run failed"))),
		},
		want: []string{
			"[  1.0s] root     created",
			"[  1.0s] root     OutOfSync  Missing",
			"[  1.0s] root     OutOfSync and automated sync is off: nothing syncs it until you do: wavecd app sync root --kubeconfig .wavecd/kubeconfig",
			"[  2.0s] root     OutOfSync  Progressing",
			"[  3.0s] root     sync started (automated)",
			"[  4.0s] root     sync failed: dry run failed",
		},
	},
	"the local cluster's notes print once each": {
		events: []Observation{
			noteAt(1, "uid-1", "Pod", "tigera-operator", "tigera-operator-5d8-x", "runs as process tigera-operator (/bin/tigera-operator v1.35.0), output in /c/logs/process-tigera-operator_tigera-operator-5d8-x.log"),
			noteAt(2, "uid-1", "Pod", "tigera-operator", "tigera-operator-5d8-x", "runs as process tigera-operator (/bin/tigera-operator v1.35.0), output in /c/logs/process-tigera-operator_tigera-operator-5d8-x.log"),
			noteAt(3, "uid-2", "EC2NodeClass", "", "default", "served by KWOKNodeClass default"),
		},
		want: []string{
			"[  1.0s] pod tigera-operator/tigera-operator-5d8-x: runs as process tigera-operator (/bin/tigera-operator v1.35.0), output in /c/logs/process-tigera-operator_tigera-operator-5d8-x.log",
			"[  3.0s] ec2nodeclass default: served by KWOKNodeClass default",
		},
	},
	"pods of no app and pods found at the start say nothing": {
		events: []Observation{
			podAt(1, 3, false, "x"),
			func() Observation { o := appAt("web", 2, nil); o.initial = true; return o }(),
			func() Observation { o := podAt(2, 4, true, "x"); o.initial = true; return o }(),
		},
		want: []string{"[  2.0s] web      found from an earlier run"},
	},
}

func TestTimeline(t *testing.T) {
	for name, tc := range timelineCases {
		t.Run(name, func(t *testing.T) {
			tr := NewTracker(t0, nil)
			var got []string
			for _, o := range tc.events {
				for _, l := range tr.Observe(o) {
					got = append(got, l.String())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	opts := SettleOptions{For: 2 * time.Second, StallAfter: time.Minute, Timeout: 10 * time.Minute}
	settled := both(status("Synced", "Healthy"))
	tests := map[string]struct {
		roots   []string
		events  []Observation
		at      float64 // seconds after t0
		want    Decision
		waiting string
	}{
		"nothing yet":                {roots: []string{"root"}, at: 1, want: Waiting, waiting: "root: not created yet"},
		"settled, but only just":     {events: []Observation{appAt("a", 1, settled)}, at: 2.5, want: Waiting},
		"settled for 2s":             {events: []Observation{appAt("a", 1, settled)}, at: 3, want: Settled},
		"an operation is requested":  {events: []Observation{appAt("a", 1, both(settled, func(a *v1alpha1.Application) { a.Operation = &v1alpha1.Operation{} }))}, at: 5, want: Waiting, waiting: "a: sync running"},
		"PostSync hooks still run":   {events: []Observation{appAt("a", 1, both(settled, running("waiting for Job a/smoke: 0/1 complete", `{"syncPhase":"PostSync","wave":0}`)))}, at: 5, want: Waiting, waiting: "a: sync running, waiting for Job a/smoke: 0/1 complete"},
		"status from an earlier run": {events: []Observation{appAt("a", 1, both(settled, func(a *v1alpha1.Application) { a.Status.ReconciledAt = &metav1.Time{Time: t0.Add(-time.Hour)} }))}, at: 5, want: Waiting, waiting: "a: not compared by this run's controller yet"},
		"a comparison error": {events: []Observation{appAt("a", 1, both(settled, func(a *v1alpha1.Application) {
			a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "ComparisonError", Message: "no repo"}}
		}))}, at: 5, want: Waiting, waiting: "a: ComparisonError: no repo"},
		"a failed sync, not what its objects wait on": {events: []Observation{appAt("a", 1, both(status("OutOfSync", "Missing"), failed("dry-run Rollout a/b: no matches for kind"), func(a *v1alpha1.Application) {
			a.Status.Resources = []v1alpha1.ResourceStatus{{Kind: "Service", Namespace: "a", Name: "b", Health: &v1alpha1.HealthStatus{Status: "Missing"}}}
		}))}, at: 5, want: Waiting, waiting: "a: sync failed: dry-run Rollout a/b: no matches for kind"},
		"a manual app nobody synced": {events: []Observation{appAt("a", 1, both(manual, status("OutOfSync", "Missing")))}, at: 5, want: Waiting,
			waiting: "a: OutOfSync and automated sync is off: nothing syncs it until you do: wavecd app sync a --kubeconfig .wavecd/kubeconfig"},
		"progressing, then quiet 1m":  {events: []Observation{appAt("a", 1, status("Synced", "Progressing"))}, at: 61, want: Stalled, waiting: "a: Synced Progressing"},
		"still changing at the limit": {events: []Observation{appAt("a", 1, status("Synced", "Progressing")), appAt("a", 599, status("OutOfSync", "Progressing"))}, at: 600, want: TimedOut, waiting: "a: OutOfSync Progressing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tr := NewTracker(t0, tc.roots)
			for _, o := range tc.events {
				tr.Observe(o)
			}
			at := t0.Add(time.Duration(tc.at * float64(time.Second)))
			if got := tr.Decide(at, opts); got != tc.want {
				t.Errorf("decide = %v, want %v (unsettled: %v)", got, tc.want, tr.Unsettled())
			}
			if got := strings.Join(tr.Unsettled(), "; "); tc.waiting != "" && got != tc.waiting {
				t.Errorf("unsettled = %q, want %q", got, tc.waiting)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	tr := NewTracker(t0, []string{"root"})
	wave := func(w string) func(*v1alpha1.Application) {
		return func(a *v1alpha1.Application) { a.Annotations = map[string]string{hook.AnnotationSyncWave: w} }
	}
	for _, o := range []Observation{
		appAt("root", 0.5, status("OutOfSync", "Progressing")),
		appAt("db", 1, wave("0")),
		appAt("web", 1, both(wave("1"), func(a *v1alpha1.Application) { a.Spec.Destination.Namespace = "web" })),
		appAt("cache", 1, wave("0")),
		appAt("db", 4, both(wave("0"), status("Synced", "Healthy"))),
		podAt(5, 2, false, "x"),
		appAt("web", 6, both(wave("1"), status("Synced", "Progressing"))),
		appAt("root", 12.25, status("Synced", "Healthy")),
	} {
		tr.Observe(o)
	}
	var b strings.Builder
	if err := tr.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `APP    WAVE  SYNCED AT  HEALTHY AT  POD RESTARTS
root   -     12.2s      12.2s       0
cache  0     -          -           0
db     0     4.0s       4.0s        0
web    1     6.0s       -           2
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestSummaryNotes(t *testing.T) {
	tr := NewTracker(t0, []string{"root"})
	for _, o := range []Observation{
		appAt("root", 1, both(manual, status("OutOfSync", "Missing"))),
		appAt("blue-green", 2, both(status("OutOfSync", "Missing"), failed("one or more objects failed to apply (dry run), reason: dry-run argoproj.io/Rollout blue-green/blue-green-helm-guestbook: no matches for kind \"Rollout\" in version \"argoproj.io/v1alpha1\""))),
		appAt("web", 3, status("Synced", "Healthy")),
		appAt("retried", 4, both(status("OutOfSync", "Missing"), running("Retrying attempt #2 at 10:00:00: boom", ""))),
	} {
		tr.Observe(o)
	}
	var b strings.Builder
	if err := tr.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `APP         WAVE  SYNCED AT  HEALTHY AT  POD RESTARTS  NOTE
root        -     -          -           0             OutOfSync, automated sync off: wavecd app sync root
blue-green  0     -          -           0             sync failed: one or more objects failed to apply (dry run), reason: dry-run argoproj.io/Rollout blue...
retried     0     -          -           0             sync failing: Retrying attempt #2 at 10:00:00: boom
web         0     3.0s       3.0s        0             
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestLineShowsTheTimeAtFullScale(t *testing.T) {
	tests := map[string]struct {
		l    Line
		want string
	}{
		"real time":           {l: Line{at: 4200 * time.Millisecond, text: "x"}, want: "[  4.2s] x"},
		"a scale of 1":        {l: Line{at: 4200 * time.Millisecond, text: "x", scale: 1}, want: "[  4.2s] x"},
		"ten times faster":    {l: Line{at: 18 * time.Second, text: "redis ready", scale: 0.1}, want: "[ 18.0s |  180.0s] redis ready"},
		"twenty times faster": {l: Line{at: 2500 * time.Millisecond, text: "y", scale: 0.05}, want: "[  2.5s |   50.0s] y"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.l.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// noteAt is a note of the local cluster on an object at second sec.
func noteAt(sec float64, uid, kind, ns, name, msg string) Observation {
	e := &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name}, Message: msg}
	e.UID = types.UID(uid)
	return Observation{at: t0.Add(time.Duration(sec * float64(time.Second))), note: e}
}
