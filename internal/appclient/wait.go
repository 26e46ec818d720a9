package appclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// WaitFor says which states `app wait` waits for. The zero value waits for
// Sync, Health and Operation, as `argocd app wait` does without flags.
type WaitFor struct {
	// Sync waits for sync status Synced.
	Sync bool
	// Health waits for health Healthy (or Suspended/Degraded when those
	// are set too).
	Health bool
	// Operation waits until no operation is pending or running.
	Operation bool
	// Suspended accepts health Suspended.
	Suspended bool
	// Degraded accepts health Degraded.
	Degraded bool
}

func (w WaitFor) orDefault() WaitFor {
	if w == (WaitFor{}) {
		return WaitFor{Sync: true, Health: true, Operation: true}
	}
	return w
}

// Wait waits for an app to reach the states in For, like `argocd app wait`.
type Wait struct {
	Client *Client
	Name   string
	For    WaitFor
	// Timeout ends the wait with a *TimeoutError; zero waits forever.
	Timeout time.Duration
	// OnChange is called with each new version of the app.
	OnChange func(app *v1alpha1.Application)
}

// Run waits and returns the app as last seen.
func (a *Wait) Run(ctx context.Context) (*v1alpha1.Application, error) {
	w := a.For.orDefault()
	wctx, cancel := withTimeout(ctx, a.Timeout)
	defer cancel()
	var last *v1alpha1.Application
	var prevHealth v1alpha1.HealthStatusCode
	err := a.Client.watch(wctx, a.Name, func(app *v1alpha1.Application, deleted bool) (bool, error) {
		if deleted {
			return true, fmt.Errorf("application %q in namespace %q was deleted", a.Name, a.Client.Namespace)
		}
		last = app
		if a.OnChange != nil {
			a.OnChange(app)
		}
		health := app.Status.Health.Status
		if w.Health && health == "Degraded" && prevHealth != "" && prevHealth != "Unknown" && prevHealth != "Degraded" && !w.Degraded {
			return true, fmt.Errorf("application %q health state has transitioned from %s to %s", a.Name, prevHealth, health)
		}
		prevHealth = health
		return w.reached(app), nil
	})
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return last, &TimeoutError{Name: a.Name, Timeout: a.Timeout, What: "to be " + w.describe()}
		}
		return last, err
	}
	return last, nil
}

// reached reports whether app is in the wanted states (Argo CD's
// checkResourceStatus and its operation-in-progress test).
func (w WaitFor) reached(app *v1alpha1.Application) bool {
	var accepted []v1alpha1.HealthStatusCode
	if w.Health {
		accepted = append(accepted, "Healthy")
	}
	if w.Suspended {
		accepted = append(accepted, "Suspended")
	}
	if w.Degraded {
		accepted = append(accepted, "Degraded")
	}
	if len(accepted) > 0 && !slices.Contains(accepted, app.Status.Health.Status) {
		return false
	}
	if w.Sync && app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		return false
	}
	return !w.Operation || !operationInProgress(app)
}

// operationInProgress is true while an operation is requested or running,
// and after a real (not dry-run) sync until the controller has reconciled
// the app once more, so sync and health reflect the sync's result.
func operationInProgress(app *v1alpha1.Application) bool {
	if app.Operation != nil {
		return true
	}
	st := app.Status.OperationState
	if st == nil {
		return false
	}
	if st.FinishedAt == nil {
		return true
	}
	dryRun := st.Operation.Sync != nil && st.Operation.Sync.DryRun
	return !dryRun && (app.Status.ReconciledAt == nil || app.Status.ReconciledAt.Before(st.FinishedAt))
}

func (w WaitFor) describe() string {
	var parts []string
	if w.Sync {
		parts = append(parts, "Synced")
	}
	var health []string
	for _, h := range []struct {
		on   bool
		name string
	}{{w.Health, "Healthy"}, {w.Suspended, "Suspended"}, {w.Degraded, "Degraded"}} {
		if h.on {
			health = append(health, h.name)
		}
	}
	if len(health) > 0 {
		parts = append(parts, strings.Join(health, " or "))
	}
	if w.Operation {
		parts = append(parts, "without a running operation")
	}
	return strings.Join(parts, ", ")
}
