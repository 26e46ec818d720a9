package sync

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
)

// EventType names what the executor did.
type EventType string

// The event types.
const (
	EventStart        EventType = "Start"
	EventNamespace    EventType = "NamespaceCreated"
	EventDryRun       EventType = "DryRun"
	EventDryRunFailed EventType = "DryRunFailed"
	EventStep         EventType = "StepStarted"
	EventPrune        EventType = "Prune"
	EventPruneSkipped EventType = "PruneSkipped"
	EventHookDeleted  EventType = "HookDeleted"
	EventApply        EventType = "Apply"
	EventApplied      EventType = "Applied"
	EventApplyFailed  EventType = "ApplyFailed"
	EventWaiting      EventType = "Waiting"
	EventTaskDone     EventType = "TaskDone"
	EventTaskFailed   EventType = "TaskFailed"
	EventWaveHealthy  EventType = "WaveHealthy"
	EventSyncFail     EventType = "SyncFailing"
	EventSucceeded    EventType = "Succeeded"
	EventFailed       EventType = "Failed"
)

// Event is one entry of the executor's log.
type Event struct {
	// Time is when it happened; for WaveHealthy, when the watch event that
	// made the wave healthy arrived.
	Time      time.Time          `json:"time"`
	Type      EventType          `json:"type"`
	SyncPhase v1alpha1.SyncPhase `json:"syncPhase,omitempty"`
	Wave      int                `json:"wave"`
	// Task is the task's ID, empty for events about a step or the sync.
	Task    string `json:"task,omitempty"`
	Message string `json:"message,omitempty"`
}

// eventLog is an ordered, concurrency-safe log of events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
	notify func(Event)
}

func (l *eventLog) add(ctx context.Context, e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	logctx.From(ctx).Debug("sync event", "type", e.Type, "phase", e.SyncPhase, "wave", e.Wave, "task", e.Task, "message", e.Message)
	if l.notify != nil {
		l.notify(e)
	}
}

func (l *eventLog) list() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}
