package controller

import (
	"context"
	"math"
	"strconv"
	stdsync "sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// written remembers the resourceVersion of the controller's newest write
// to each app. Status writes are merge patches computed against the copy
// the controller read: a copy older than the controller's own last write
// would let a patch skip a field the controller changed back. The cache's
// copy is used when it is at least as new as that write; otherwise the app
// is read from the API server.
//
// Resource versions are compared as numbers, which is what the API server
// (etcd revisions) issues; one that is not a number always sends the read
// to the API server.
type written struct {
	mu stdsync.Mutex
	rv map[string]uint64
}

// covers reports whether a copy at version rv includes the controller's
// last write to app name.
func (w *written) covers(name, rv string) bool {
	last, ok := w.last(name)
	return !ok || atLeast(rv, last)
}

// includesLast reports whether the controller wrote app name, and a copy
// at version rv includes its last write. Unlike covers, an app the
// controller has not written is not known to be current.
func (w *written) includesLast(name, rv string) bool {
	last, ok := w.last(name)
	return ok && atLeast(rv, last)
}

func (w *written) last(name string) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.rv[name]
	return last, ok
}

// atLeast reports whether resourceVersion rv is a number no less than v.
func atLeast(rv string, v uint64) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && n >= v
}

func (w *written) set(name, rv string) {
	v, err := strconv.ParseUint(rv, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rv == nil {
		w.rv = map[string]uint64{}
	}
	if err != nil {
		v = math.MaxUint64 // never covered: read from the API server
	}
	w.rv[name] = max(w.rv[name], v)
}

func (w *written) forget(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.rv, name)
}

// readApp reads the app key names: from the cache when the cached copy
// includes the controller's last write to it, else from the API server.
func (r *Reconciler) readApp(ctx context.Context, key client.ObjectKey, app *v1alpha1.Application) error {
	err := r.client.Get(ctx, key, app)
	if err == nil {
		if r.written.covers(key.Name, app.ResourceVersion) {
			return nil
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	return r.apiReader.Get(ctx, key, app)
}

// patchApp writes app as a merge patch from base and remembers the
// version written.
func (r *Reconciler) patchApp(ctx context.Context, app, base *v1alpha1.Application) error {
	if err := r.client.Patch(ctx, app, client.MergeFrom(base)); err != nil {
		return err
	}
	r.written.set(app.Name, app.ResourceVersion)
	r.recordChanges(base, app)
	return nil
}

// comparedTimes remembers when the controller last compared each app. A
// comparison that changes nothing but the timestamps is not always
// written (see writeRefresh), so status.reconciledAt may be older.
type comparedTimes struct {
	mu stdsync.Mutex
	at map[string]time.Time
}

func (c *comparedTimes) set(name string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string]time.Time{}
	}
	c.at[name] = t
}

// get returns when app name was last compared by this controller.
func (c *comparedTimes) get(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[name]
	return t, ok
}

func (c *comparedTimes) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.at, name)
}

// lastCompared is when app was last compared: by this controller, or as
// its status says.
func (r *Reconciler) lastCompared(app *v1alpha1.Application) (time.Time, bool) {
	t, ok := r.compared.get(app.Name)
	if st := app.Status.ReconciledAt; st != nil && st.After(t) {
		return st.Time, true
	}
	return t, ok
}
