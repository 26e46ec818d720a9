package controller

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// EventComponent is the reporting controller of the Kubernetes Events the
// controller records on Applications.
const EventComponent = "wavecd-application-controller"

// The reasons of the events recorded on Applications: Argo CD's, and
// otherwise the condition type that appeared.
const (
	ReasonOperationStarted   = "OperationStarted"
	ReasonOperationCompleted = "OperationCompleted"
	ReasonResourceUpdated    = "ResourceUpdated"
)

// maxEventNote is how long a message may grow, in bytes: the newer events
// API refuses longer notes, and a failed sync's message can be far longer.
const maxEventNote = 1024

// appEvent is one Kubernetes Event about an Application.
type appEvent struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
	Note   string `json:"note"`
}

// changeEvents lists the events a write of an Application from base to
// app makes, as Argo CD records them: an automated sync requested, an
// operation started or completed, a new sync or health status (from the
// second comparison on: the first only fills an empty status). A
// condition that appears is recorded too, so `kubectl describe` and
// `kubectl events` show why an app waits or failed without its status.
func changeEvents(base, app *v1alpha1.Application) []appEvent {
	out := operationEvents(base, app)
	// An app's first comparison only fills an empty status: nothing changed.
	if base.Status.Sync.Status != "" {
		out = append(out, statusEvents(base, app)...)
	}
	out = append(out, serverSideEvents(base, app)...)
	return append(out, conditionEvents(base, app)...)
}

// ReasonServerSideApplied is the reason of the event recorded when an
// object too large for client-side apply was applied server-side.
const ReasonServerSideApplied = "ServerSideApplied"

// serverSideEvents records each object that the operation applied
// server-side, since the write before, because it was too large for
// client-side apply.
func serverSideEvents(base, app *v1alpha1.Application) []appEvent {
	st := app.Status.OperationState
	if st == nil || st.SyncResult == nil {
		return nil
	}
	seen := map[string]bool{}
	if was := base.Status.OperationState; was != nil && was.SyncResult != nil && was.StartedAt.Equal(&st.StartedAt) {
		for _, r := range was.SyncResult.Resources {
			seen[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name] = true
		}
	}
	var out []appEvent
	for _, r := range st.SyncResult.Resources {
		if !strings.Contains(r.Message, wsync.TooLargeForClientSide) || seen[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name] {
			continue
		}
		out = append(out, appEvent{corev1.EventTypeNormal, ReasonServerSideApplied, r.Message})
	}
	return out
}

// statusEvents records a new sync or health status.
func statusEvents(base, app *v1alpha1.Application) []appEvent {
	var out []appEvent
	if was, is := base.Status.Sync.Status, app.Status.Sync.Status; was != is {
		out = append(out, appEvent{corev1.EventTypeNormal, ReasonResourceUpdated,
			fmt.Sprintf("Updated sync status: %s -> %s", was, is)})
	}
	if was, is := base.Status.Health.Status, app.Status.Health.Status; was != is {
		out = append(out, appEvent{corev1.EventTypeNormal, ReasonResourceUpdated,
			fmt.Sprintf("Updated health status: %s -> %s", was, is)})
	}
	return out
}

// operationEvents records an automated sync the write requests, the start
// of an operation a user asked for, and an operation's end.
func operationEvents(base, app *v1alpha1.Application) []appEvent {
	var out []appEvent
	if op := app.Operation; op != nil && base.Operation == nil && op.InitiatedBy.Automated && op.Sync != nil {
		out = append(out, appEvent{corev1.EventTypeNormal, ReasonOperationStarted,
			fmt.Sprintf("Initiated automated sync to '%s'", op.Sync.Revision)})
	}
	was, is := base.Status.OperationState, app.Status.OperationState
	if is == nil {
		return out
	}
	started := was == nil || !was.StartedAt.Equal(&is.StartedAt)
	if started && !is.Operation.InitiatedBy.Automated {
		what := "sync to " + operationRevision(is)
		if is.Operation.Sync != nil && is.Operation.Sync.Manifests != nil {
			what = "sync locally"
		}
		out = append(out, appEvent{corev1.EventTypeNormal, ReasonOperationStarted,
			fmt.Sprintf("%s initiated %s", initiator(is.Operation.InitiatedBy), what)})
	}
	if is.Phase.Completed() && (started || !was.Phase.Completed()) {
		out = append(out, completedEvent(is))
	}
	return out
}

func initiator(by v1alpha1.OperationInitiator) string {
	if by.Username != "" {
		return by.Username
	}
	return "Unknown user"
}

func operationRevision(st *v1alpha1.OperationState) string {
	if st.SyncResult != nil && st.SyncResult.Revision != "" {
		return st.SyncResult.Revision
	}
	if sync := st.Operation.Sync; sync != nil && sync.Revision != "" {
		return sync.Revision
	}
	return "HEAD"
}

func completedEvent(st *v1alpha1.OperationState) appEvent {
	if st.Phase == v1alpha1.OperationSucceeded {
		return appEvent{corev1.EventTypeNormal, ReasonOperationCompleted,
			fmt.Sprintf("Sync operation to %s succeeded", operationRevision(st))}
	}
	return appEvent{corev1.EventTypeWarning, ReasonOperationCompleted,
		fmt.Sprintf("Sync operation to %s %s: %s", operationRevision(st), strings.ToLower(string(st.Phase)), st.Message)}
}

// conditionEvents records each condition type the write adds: a Warning
// for errors, warnings and a stalled sync, Normal for a dependency wait.
func conditionEvents(base, app *v1alpha1.Application) []appEvent {
	if len(app.Status.Conditions) == 0 {
		return nil
	}
	had := map[string]bool{}
	for _, c := range base.Status.Conditions {
		had[c.Type] = true
	}
	var out []appEvent
	for _, c := range app.Status.Conditions {
		if had[c.Type] {
			continue
		}
		typ := corev1.EventTypeWarning
		if c.Type == v1alpha1.ApplicationConditionDependencyWait {
			typ = corev1.EventTypeNormal
		}
		out = append(out, appEvent{typ, c.Type, c.Message})
	}
	return out
}

// eventRate and eventBurst pace the Events sent to the API server while
// syncs run: a bootstrap of hundreds of apps records several per app, and
// the API server's time goes to the syncs first. Meanwhile events wait in
// client-go's queue, which holds a thousand. With no sync running they
// go at eventQuietRate, so that the events a burst of syncs left waiting
// reach users within seconds of its end, not over the half minute the
// sync rate would take; the rate still bounds a storm of status changes
// (every app of a cluster that went away).
const (
	eventRate      = 50
	eventQuietRate = 500
	eventBurst     = 100
)

// pacedSink sends events no faster than eventRate per second while busy
// reports syncs running, eventQuietRate otherwise.
type pacedSink struct {
	record.EventSink
	ctx     context.Context //nolint:containedctx // the controller's lifetime: a stop ends the wait
	limiter *rate.Limiter
	busy    func() bool
}

func newPacedSink(ctx context.Context, sink record.EventSink, busy func() bool) *pacedSink {
	return &pacedSink{EventSink: sink, ctx: ctx, limiter: rate.NewLimiter(eventRate, eventBurst), busy: busy}
}

// wait takes the event's turn at the rate of the moment.
func (s *pacedSink) wait() error {
	limit := rate.Limit(eventQuietRate)
	if s.busy() {
		limit = eventRate
	}
	if s.limiter.Limit() != limit {
		s.limiter.SetLimit(limit)
	}
	return s.limiter.Wait(s.ctx)
}

func (s *pacedSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if err := s.wait(); err != nil {
		return nil, err
	}
	return s.EventSink.Create(e)
}

func (s *pacedSink) Update(e *corev1.Event) (*corev1.Event, error) {
	if err := s.wait(); err != nil {
		return nil, err
	}
	return s.EventSink.Update(e)
}

func (s *pacedSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	if err := s.wait(); err != nil {
		return nil, err
	}
	return s.EventSink.Patch(old, data)
}

// recordChanges records the events of a write that landed. A controller
// built without an event recorder (some tests) records none.
func (r *Reconciler) recordChanges(base, app *v1alpha1.Application) {
	if r.recorder == nil {
		return
	}
	for _, e := range changeEvents(base, app) {
		r.recorder.Eventf(app, e.Type, e.Reason, "%s", application.Truncate(e.Note, maxEventNote))
	}
}
