package controller

import (
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Self-heal backoff: 2 s, times 3 per attempt, capped at 300 s.
const (
	selfHealBase   = 2 * time.Second
	selfHealFactor = 3
	selfHealCap    = 300 * time.Second
)

// autoSyncOperation returns the operation automated sync wants now, or nil
// with how long to wait before asking again (0: until something changes).
// Like Argo CD it never syncs a revision whose automated sync failed until
// the revision changes, and re-syncs a drifted app only with selfHeal.
func (sr *starter) autoSyncOperation(app *v1alpha1.Application) (*v1alpha1.Operation, time.Duration) {
	pol := app.Spec.SyncPolicy
	if !pol.IsAutomated() || app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync || hasCondition(app, v1alpha1.ApplicationConditionComparisonError) {
		return nil, 0
	}
	revision := app.Status.Sync.Revision
	attempts := int64(0)
	if last := app.Status.OperationState; last != nil && last.SyncResult != nil && last.SyncResult.Revision == revision &&
		last.Operation.InitiatedBy.Automated {
		if last.Phase != v1alpha1.OperationSucceeded {
			return nil, 0
		}
		if !pol.Automated.SelfHeal {
			return nil, 0
		}
		if last.Operation.Sync != nil {
			attempts = last.Operation.Sync.AutoHealAttemptsCount + 1
		}
		if last.FinishedAt != nil {
			if wait := selfHealDelay(attempts) - sr.now().Sub(last.FinishedAt.Time); wait > 0 {
				return nil, wait
			}
		}
	}
	op := &v1alpha1.Operation{
		Sync: &v1alpha1.SyncOperation{
			Revision: revision, Prune: pol.Automated.Prune, SyncOptions: pol.SyncOptions, AutoHealAttemptsCount: attempts,
		},
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
	}
	if pol.Retry != nil {
		op.Retry = *pol.Retry
	}
	return op, 0
}

func selfHealDelay(attempts int64) time.Duration {
	d := time.Duration(0)
	if attempts > 0 {
		d = selfHealBase
		for i := int64(1); i < attempts && d < selfHealCap; i++ {
			d *= selfHealFactor
		}
	}
	return min(d, selfHealCap)
}

func hasCondition(app *v1alpha1.Application, typ string) bool {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// conditionMessage returns the message of the app's condition of type
// typ, "" when it has none.
func conditionMessage(app *v1alpha1.Application, typ string) string {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}
