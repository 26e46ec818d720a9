package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// eventsFixture is one case of testdata/events: a write from base to app,
// and the events it records.
type eventsFixture struct {
	Base v1alpha1.Application `json:"base"`
	App  v1alpha1.Application `json:"app"`
	Want []appEvent           `json:"want"`
}

func TestChangeEvents(t *testing.T) {
	testenv.EachFixture(t, "events", func(t *testing.T, f *eventsFixture) {
		got := changeEvents(&f.Base, &f.App)
		if diff := cmp.Diff(f.Want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// TestEventsRecorded syncs an app automatically and another, broken, at a
// user's request, and reads the Events the controller recorded on each as
// `kubectl describe application` and the API server's events call do:
// core/v1 Events selected by the involved object's name.
func TestEventsRecorded(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{
		"guestbook/configmap.yaml": guestbookConfigMap,
		"broken/configmap.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n",
	})
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, automated: true})
	h.create(testApp{name: "broken", repoURL: repo.Dir, syncNow: true})
	head := strings.TrimSpace(repo.Git("rev-parse", "HEAD"))

	h.waitAppEvents("guestbook", []appEvent{
		{corev1.EventTypeNormal, ReasonOperationStarted, "Initiated automated sync to '" + head + "'"},
		{corev1.EventTypeNormal, ReasonOperationCompleted, "Sync operation to " + head + " succeeded"},
		{corev1.EventTypeNormal, ReasonResourceUpdated, "Updated sync status: OutOfSync -> Synced"},
	})
	h.waitAppEvents("broken", []appEvent{
		{corev1.EventTypeNormal, ReasonOperationStarted, "test initiated sync to " + head},
	})
	var got []corev1.Event
	testenv.Eventually(t, 60*time.Second, "a Warning OperationCompleted on broken that names Not_A_Name", func() bool {
		got = h.appEvents("broken")
		return slices.ContainsFunc(got, func(e corev1.Event) bool {
			return e.Reason == ReasonOperationCompleted && e.Type == corev1.EventTypeWarning &&
				strings.HasPrefix(e.Message, "Sync operation to "+head+" failed: ") && strings.Contains(e.Message, "Not_A_Name")
		})
	})
	got = append(got, h.appEvents("guestbook")...)
	for _, e := range got {
		if e.Source.Component != EventComponent || e.InvolvedObject.Kind != v1alpha1.ApplicationKind {
			t.Errorf("event %s %q: reported by %q about a %q, want %q about an Application",
				e.Reason, e.Message, e.Source.Component, e.InvolvedObject.Kind, EventComponent)
		}
	}
}

// appEvents lists the core/v1 Events about the app, oldest first.
func (h *harness) appEvents(name string) []corev1.Event {
	h.t.Helper()
	var list corev1.EventList
	if err := h.c.List(context.Background(), &list, client.InNamespace(h.ns),
		client.MatchingFields{"involvedObject.name": name}); err != nil {
		h.t.Fatalf("list events of %s: %v", name, err)
	}
	slices.SortStableFunc(list.Items, func(a, b corev1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
	return list.Items
}

// waitAppEvents waits until the app has each wanted event and returns all.
func (h *harness) waitAppEvents(name string, want []appEvent) []corev1.Event {
	h.t.Helper()
	var got []corev1.Event
	missing := want
	deadline := time.Now().Add(60 * time.Second)
	for len(missing) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = h.appEvents(name)
		missing = slices.DeleteFunc(slices.Clone(want), func(w appEvent) bool {
			return slices.ContainsFunc(got, func(e corev1.Event) bool {
				return e.Type == w.Type && e.Reason == w.Reason && e.Message == w.Note
			})
		})
	}
	if len(missing) > 0 {
		var lines []string
		for _, e := range got {
			lines = append(lines, fmt.Sprintf("%s %s %q", e.Type, e.Reason, e.Message))
		}
		h.t.Fatalf("app %s: events %+v not recorded within 60s; recorded:\n%s", name, missing, strings.Join(lines, "\n"))
	}
	return got
}

// countingSink counts the events that reach it.
type countingSink struct{ n int }

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) { s.n++; return e, nil }
func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) { s.n++; return e, nil }
func (s *countingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	s.n++
	return e, nil
}

// TestPacedSinkStops checks the burst goes through at once and that a
// stopped controller's sink sends nothing more instead of waiting.
func TestPacedSinkStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	inner := &countingSink{}
	sink := newPacedSink(ctx, inner, func() bool { return true })
	for i := range eventBurst {
		if _, err := sink.Create(&corev1.Event{}); err != nil {
			t.Fatalf("event %d of the burst: %v", i, err)
		}
	}
	cancel()
	if _, err := sink.Create(&corev1.Event{}); err == nil {
		t.Error("an event past the burst was sent after the stop")
	}
	if _, err := sink.Patch(&corev1.Event{}, nil); err == nil {
		t.Error("a patch past the burst was sent after the stop")
	}
	if inner.n != eventBurst {
		t.Errorf("%d events reached the API server, want the burst of %d", inner.n, eventBurst)
	}
}

// TestPacedSinkRate checks the pace follows the syncs: the sync rate
// while one runs, the quiet rate once none does, and back.
func TestPacedSinkRate(t *testing.T) {
	busy := true
	sink := newPacedSink(t.Context(), &countingSink{}, func() bool { return busy })
	for _, step := range []struct {
		busy bool
		want float64
	}{{true, eventRate}, {false, eventQuietRate}, {false, eventQuietRate}, {true, eventRate}} {
		busy = step.busy
		if _, err := sink.Create(&corev1.Event{}); err != nil {
			t.Fatal(err)
		}
		if got := float64(sink.limiter.Limit()); got != step.want {
			t.Errorf("syncs running %v: events paced at %v a second, want %v", step.busy, got, step.want)
		}
	}
}
