package appstatus

import (
	"context"
	"fmt"
	"math"
	"strconv"
	stdsync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Writer reads and writes the Applications of one controller.
type Writer struct {
	// client is the controller's client: reads from its cache, writes to
	// the API server.
	client client.Client
	// reader reads from the API server.
	reader client.Reader
	// written is told of each write that landed, with the app before and
	// after it; nil tells no one.
	written  func(base, app *v1alpha1.Application)
	versions versions
	// owner, when set, is the field manager of the writes (sharded
	// replicas each write under their own name).
	owner string
}

// SetFieldOwner makes the Writer write as field manager owner, which the
// apps' managedFields then name.
func (w *Writer) SetFieldOwner(owner string) { w.owner = owner }

// NewWriter returns a Writer; c may read from a cache, reader must read
// from the API server. written, when not nil, is told of each write that
// landed (the controller records its Events).
func NewWriter(c client.Client, reader client.Reader, written func(base, app *v1alpha1.Application)) *Writer {
	return &Writer{client: c, reader: reader, written: written}
}

// ReadCurrent reads the app key names from the cache. It does not read
// the API server when the cached copy is older than the controller's last
// write: it reports current false instead, and the
// caller waits for the cache (the write's own watch event follows
// within moments). An app missing from the cache is read from the API
// server, which tells whether it is gone. app is filled with the cache's
// own copy (its maps and slices are the cache's): it is read, never
// changed; Begin changes a copy of it.
func (w *Writer) ReadCurrent(ctx context.Context, key client.ObjectKey, app *v1alpha1.Application) (current bool, err error) {
	err = w.client.Get(ctx, key, app, client.UnsafeDisableDeepCopy)
	switch {
	case err == nil:
		return w.versions.covers(key, app.ResourceVersion), nil
	case !apierrors.IsNotFound(err):
		return false, err
	}
	if err := w.reader.Get(ctx, key, app); err != nil {
		return false, err
	}
	return true, nil
}

// Begin starts a pending patch of the app as read, which the caller then
// changes through Patch.App (a copy) and writes with Patch.Flush. read
// is the patch's base and is never changed: it may be the cache's own
// copy (ReadCurrent).
func (w *Writer) Begin(read *v1alpha1.Application) *Patch {
	return &Patch{w: w, app: read.DeepCopy(), base: read}
}

// Update reads the app key names, lets change change it, and writes the
// change in one patch.
func (w *Writer) Update(ctx context.Context, key client.ObjectKey, change func(app *v1alpha1.Application)) error {
	_, err := w.UpdateFrom(ctx, key, nil, change)
	return err
}

// UpdateFrom is Update for a writer that holds the app as it last wrote
// it (or read it), last: when the cache has not caught up with the
// controller's last write but last includes it, last is changed instead
// of reading the API server (a sync runner saving its progress step by
// step). It returns the app as written; last is not modified.
func (w *Writer) UpdateFrom(ctx context.Context, key client.ObjectKey, last *v1alpha1.Application,
	change func(app *v1alpha1.Application)) (*v1alpha1.Application, error) {
	read, err := w.readFrom(ctx, key, last)
	if err != nil {
		return nil, fmt.Errorf("read application %s: %w", key.Name, err)
	}
	p := w.Begin(read)
	change(p.App())
	if err := p.Flush(ctx); err != nil {
		return nil, err
	}
	return p.App(), nil
}

// readFrom reads the newest copy of the app it knows without a request
// if it can: the cache's, or last, whichever is newer and includes the
// controller's last write; else it reads the API server. The app
// returned is read only (the cache's own copy, or last itself).
func (w *Writer) readFrom(ctx context.Context, key client.ObjectKey, last *v1alpha1.Application) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	err := w.client.Get(ctx, key, app, client.UnsafeDisableDeepCopy)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	lastOK := last != nil && last.ResourceVersion != "" && w.versions.covers(key, last.ResourceVersion)
	switch {
	case err == nil && w.versions.covers(key, app.ResourceVersion) && (!lastOK || newerOrSame(app.ResourceVersion, last.ResourceVersion)):
		return app, nil
	case lastOK:
		return last, nil
	}
	if err := w.reader.Get(ctx, key, app); err != nil {
		return nil, err
	}
	return app, nil
}

// IncludesLast reports whether the controller wrote the app key names,
// and a copy at version rv includes its last write.
func (w *Writer) IncludesLast(key client.ObjectKey, rv string) bool {
	return w.versions.includesLast(key, rv)
}

// Forget drops what the Writer remembers of a deleted app.
func (w *Writer) Forget(key client.ObjectKey) { w.versions.forget(key) }

// patch writes app as a patch from base, remembers the version written
// and tells of the write (as two, through via, when via is not nil: see
// Patch.Stage). The API server answers with the app's metadata only
// (decoding the whole app back was a tenth of the controller's CPU in a
// bootstrap of many apps): app keeps what the controller wrote, with the
// metadata the API server returned.
func (w *Writer) patch(ctx context.Context, app, base, via *v1alpha1.Application, patch client.Patch) error {
	data, err := patch.Data(app)
	if err != nil {
		return fmt.Errorf("build patch: %w", err)
	}
	opts := []client.PatchOption{}
	if w.owner != "" {
		opts = append(opts, client.FieldOwner(w.owner))
	}
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	meta.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
	if err := w.client.Patch(ctx, meta, client.RawPatch(patch.Type(), data), opts...); err != nil {
		return err
	}
	app.ObjectMeta = meta.ObjectMeta
	app.ManagedFields = nil // as the controller's cache keeps apps
	w.versions.set(client.ObjectKeyFromObject(app), app.ResourceVersion)
	switch {
	case w.written == nil:
	case via != nil:
		w.written(base, via)
		w.written(via, app)
	default:
		w.written(base, app)
	}
	return nil
}

// versions remembers the resourceVersion of the controller's newest write
// to each app.
//
// Resource versions are compared as numbers, which is what the API server
// (etcd revisions) issues; one that is not a number always sends the read
// to the API server.
type versions struct {
	mu stdsync.Mutex
	rv map[client.ObjectKey]uint64
}

// covers reports whether a copy at version rv includes the controller's
// last write to the app key names.
func (v *versions) covers(key client.ObjectKey, rv string) bool {
	last, ok := v.last(key)
	return !ok || atLeast(rv, last)
}

// includesLast reports whether the controller wrote the app key names,
// and a copy at version rv includes its last write. Unlike covers, an app
// the controller has not written is not known to be current.
func (v *versions) includesLast(key client.ObjectKey, rv string) bool {
	last, ok := v.last(key)
	return ok && atLeast(rv, last)
}

func (v *versions) last(key client.ObjectKey) (uint64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	last, ok := v.rv[key]
	return last, ok
}

// atLeast reports whether resourceVersion rv is a number no less than n.
func atLeast(rv string, n uint64) bool {
	got, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && got >= n
}

// newerOrSame reports whether resourceVersion a is a number no less than
// resourceVersion b.
func newerOrSame(a, b string) bool {
	n, err := strconv.ParseUint(b, 10, 64)
	return err == nil && atLeast(a, n)
}

func (v *versions) set(key client.ObjectKey, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.rv == nil {
		v.rv = map[client.ObjectKey]uint64{}
	}
	if err != nil {
		n = math.MaxUint64 // never covered: read from the API server
	}
	v.rv[key] = max(v.rv[key], n)
}

func (v *versions) forget(key client.ObjectKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.rv, key)
}
