package appclient

import (
	"context"
	"errors"

	"k8s.io/client-go/util/retry"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ErrNoOperation says there is no operation to terminate (Argo CD's
// message).
var ErrNoOperation = errors.New("Unable to terminate operation. No operation is in progress") //nolint:staticcheck // Argo CD's message

// Terminate ends an app's running operation, like `argocd app
// terminate-op`: its phase becomes Terminating, and the controller ends
// the sync at once (running hooks deleted; Failed, "Operation
// terminated").
type Terminate struct {
	Client *Client
	Name   string
}

// Run marks the operation Terminating. Errors: ErrNoOperation, or the
// app's.
func (a *Terminate) Run(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := a.Client.Get(ctx, a.Name)
		if err != nil {
			return err
		}
		st := app.Status.OperationState
		if app.Operation == nil || st == nil || st.Phase.Completed() {
			return ErrNoOperation
		}
		st.Phase = v1alpha1.OperationTerminating
		return a.Client.Kube.Update(ctx, app)
	})
}
