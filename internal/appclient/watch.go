package appclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// visitFunc sees each new version of a watched app; deleted is true when
// the app is gone. It returns true when the wait is over.
type visitFunc func(app *v1alpha1.Application, deleted bool) (bool, error)

// errRewatch ends one watch so the loop reads the app and watches again.
var errRewatch = errors.New("watch ended")

// rewatchDelay paces re-watches after a watch ends or fails.
const rewatchDelay = time.Second

// watch calls visit with the app as it is now and then with each change
// until visit is done, it fails or ctx ends. A watch the API server closes
// is restarted from a fresh read, so no change is missed for long.
func (c *Client) watch(ctx context.Context, name string, visit visitFunc) error {
	for {
		app, err := c.Get(ctx, name)
		if err != nil {
			return err
		}
		if done, err := visit(app, false); done || err != nil {
			return err
		}
		if err := c.watchFrom(ctx, name, app.ResourceVersion, visit); !errors.Is(err, errRewatch) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rewatchDelay):
		}
	}
}

func (c *Client) watchFrom(ctx context.Context, name, resourceVersion string, visit visitFunc) error {
	w, err := c.Kube.Watch(ctx, &v1alpha1.ApplicationList{},
		client.InNamespace(c.Namespace),
		client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errRewatch
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return errRewatch
			}
			app, isApp := ev.Object.(*v1alpha1.Application)
			if !isApp || app.Name != name {
				continue
			}
			setTypeMeta(app)
			done, err := visit(app, ev.Type == watch.Deleted)
			if done || err != nil {
				return err
			}
		}
	}
}

// withTimeout bounds ctx by d when d is positive.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// TimeoutError says a wait ran out of time; Last is the app as last seen.
type TimeoutError struct {
	Name    string
	Timeout time.Duration
	What    string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out (%s) waiting for application %q %s", e.Timeout, e.Name, e.What)
}

// OperationError says an operation ended in Failed or Error.
type OperationError struct {
	Name    string
	Phase   v1alpha1.OperationPhase
	Message string
}

func (e *OperationError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("operation on application %q has completed with phase: %s", e.Name, e.Phase)
	}
	return fmt.Sprintf("operation on application %q has completed with phase: %s: %s", e.Name, e.Phase, e.Message)
}

// WaitOperation waits for an operation written by Sync or Rollback to
// finish: status.operationState holds that operation in a final phase.
type WaitOperation struct {
	Client *Client
	Name   string
	// Operation is the operation as written.
	Operation *v1alpha1.Operation
	// Timeout ends the wait with a *TimeoutError; zero waits forever.
	Timeout time.Duration
	// OnProgress is called when the phase or the message changes.
	OnProgress func(state *v1alpha1.OperationState)
	// OnUnclaimed is called once when no controller has started the
	// operation after PickupWait (default 5 s): nothing may be running to
	// run it. The wait goes on.
	OnUnclaimed func(waited time.Duration)
	PickupWait  time.Duration
}

// defaultPickupWait is how long an operation may stay unclaimed before
// WaitOperation says so: a running controller starts one in well under a
// second.
const defaultPickupWait = 5 * time.Second

// Run waits. It returns the app as last seen, with an *OperationError
// when the operation Failed or Errored.
func (a *WaitOperation) Run(ctx context.Context) (*v1alpha1.Application, error) {
	wctx, cancel := withTimeout(ctx, a.Timeout)
	defer cancel()
	var last *v1alpha1.Application
	var phase v1alpha1.OperationPhase
	var message string
	var claimed atomic.Bool
	if a.OnUnclaimed != nil {
		wait := cmp.Or(a.PickupWait, defaultPickupWait)
		timer := time.AfterFunc(wait, func() {
			if !claimed.Load() && wctx.Err() == nil {
				a.OnUnclaimed(wait)
			}
		})
		defer timer.Stop()
	}
	err := a.Client.watch(wctx, a.Name, func(app *v1alpha1.Application, deleted bool) (bool, error) {
		if deleted {
			return true, fmt.Errorf("application %q in namespace %q was deleted during the operation", a.Name, a.Client.Namespace)
		}
		last = app
		st := app.Status.OperationState
		if st == nil || !operationMatches(a.Operation, &st.Operation) {
			return false, nil
		}
		claimed.Store(true)
		if (st.Phase != phase || st.Message != message) && a.OnProgress != nil {
			a.OnProgress(st)
		}
		phase, message = st.Phase, st.Message
		return st.Phase.Completed(), nil
	})
	if err != nil {
		return last, a.timeout(ctx, err)
	}
	if phase != v1alpha1.OperationSucceeded {
		return last, &OperationError{Name: a.Name, Phase: phase, Message: message}
	}
	return last, nil
}

func (a *WaitOperation) timeout(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return &TimeoutError{Name: a.Name, Timeout: a.Timeout, What: "to finish its operation"}
	}
	return err
}
