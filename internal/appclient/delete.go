package appclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// Finalizers that make the controller delete an app's objects before the
// app itself goes, with foreground or background propagation.
const (
	ResourcesFinalizer           = "resources-finalizer.argocd.argoproj.io"
	BackgroundResourcesFinalizer = ResourcesFinalizer + "/background"
)

// Delete deletes an app, like `argocd app delete` in core mode: with
// Cascade it first adds the resources finalizer so the controller deletes
// the app's objects; without it removes that finalizer so they stay.
type Delete struct {
	Client *Client
	Name   string
	// Cascade deletes the app's objects too.
	Cascade bool
	// Propagation is "foreground" (the default) or "background".
	Propagation string
	// Wait waits until the app is gone; Timeout bounds it (zero: forever).
	Wait    bool
	Timeout time.Duration
	// OnProgress is called, while Wait waits, when the controller's word on
	// the teardown changes: the step and what it waits on (the
	// DeletionWait condition), or why it is stalled (DeletionStalled,
	// prefixed "stalled: ").
	OnProgress func(message string)
}

// Run deletes the app.
func (a *Delete) Run(ctx context.Context) error {
	finalizer, err := a.finalizer()
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := a.Client.Get(ctx, a.Name)
		if err != nil {
			return err
		}
		want := cascadeFinalizers(app.Finalizers, finalizer)
		if slices.Equal(want, app.Finalizers) {
			return nil
		}
		orig := app.DeepCopy()
		app.Finalizers = want
		return a.Client.Kube.Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return err
	}
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = a.Client.Namespace, a.Name
	if err := a.Client.Kube.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
		return a.Client.explain(err, a.Name)
	}
	if a.Wait {
		return a.waitGone(ctx)
	}
	return nil
}

func (a *Delete) finalizer() (string, error) {
	if !a.Cascade {
		if a.Propagation != "" {
			return "", errors.New("cannot set a propagation policy when cascading is disabled")
		}
		return "", nil
	}
	switch a.Propagation {
	case "", "foreground":
		return ResourcesFinalizer, nil
	case "background":
		return BackgroundResourcesFinalizer, nil
	}
	return "", fmt.Errorf("invalid propagation policy %q: use foreground or background", a.Propagation)
}

// cascadeFinalizers returns finalizers with finalizer as the only cascade
// finalizer (none when it is empty), keeping the order of the others.
func cascadeFinalizers(finalizers []string, finalizer string) []string {
	out := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool {
		return (f == ResourcesFinalizer || f == BackgroundResourcesFinalizer) && f != finalizer
	})
	if finalizer != "" && !slices.Contains(out, finalizer) {
		out = append(out, finalizer)
	}
	return out
}

func (a *Delete) waitGone(ctx context.Context) error {
	wctx, cancel := withTimeout(ctx, a.Timeout)
	defer cancel()
	last := ""
	err := a.Client.watch(wctx, a.Name, func(app *v1alpha1.Application, deleted bool) (bool, error) {
		if m := teardownProgress(app); !deleted && m != "" && m != last && a.OnProgress != nil {
			a.OnProgress(m)
			last = m
		}
		return deleted, nil
	})
	var nf *application.NotFoundError
	switch {
	case err == nil || errors.As(err, &nf):
		return nil
	case ctx.Err() == nil && wctx.Err() != nil:
		return &TimeoutError{Name: a.Name, Timeout: a.Timeout, What: "to be deleted"}
	}
	return err
}

// teardownProgress is what app's conditions say about its teardown: why
// it is stalled, else what it waits on.
func teardownProgress(app *v1alpha1.Application) string {
	for _, typ := range []string{v1alpha1.ApplicationConditionDeletionStalled, v1alpha1.ApplicationConditionDeletionWait} {
		if c := application.Condition(app, typ); c != nil && c.Message != "" {
			return c.Message
		}
	}
	return ""
}
