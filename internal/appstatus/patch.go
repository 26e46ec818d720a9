package appstatus

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Patch is a pending change to one Application: Flush writes what changed
// in App since Begin (or the last Flush) as one merge patch.
type Patch struct {
	w    *Writer
	app  *v1alpha1.Application
	base *v1alpha1.Application
	// quietMaxAge is how old the written comparison timestamps may be for
	// a timestamps-only change to be left unwritten; zero writes every
	// change.
	quietMaxAge time.Duration
	now         func() time.Time
	// staged is the app as Stage saw it: a state the next write passes
	// through without writing it.
	staged *v1alpha1.Application
}

// App is the app to change.
func (p *Patch) App() *v1alpha1.Application { return p.app }

// Base is the app as last written (or read).
func (p *Patch) Base() *v1alpha1.Application { return p.base }

// StatusOnly reports whether the pending change leaves the app's metadata
// and spec as they were: it is to the status and the operation only.
func (p *Patch) StatusOnly() bool {
	return equality.Semantic.DeepEqual(p.app.ObjectMeta, p.base.ObjectMeta) &&
		equality.Semantic.DeepEqual(p.app.Spec, p.base.Spec)
}

// Stage marks the app as it is now as a state the next write passes
// through: whoever is told of writes (the controller's Events) is told of
// a write from the base to this state, then of one from it to what is
// written, as if both had been written. A change that is written later,
// together with what follows it, keeps the Events of each step.
func (p *Patch) Stage() { p.staged = p.app.DeepCopy() }

// Quiet says the comparison in the patch was not asked for (a periodic
// refresh, an event): a flush that would write nothing but newer
// comparison timestamps (status.reconciledAt and observedAt) writes
// nothing while the written reconciledAt is younger than maxAge, so an
// idle app costs no writes, and its parent and the API server's watchers
// no events.
func (p *Patch) Quiet(maxAge time.Duration, now func() time.Time) {
	p.quietMaxAge, p.now = maxAge, now
}

// Flush writes the pending change, if any; the app then holds what was
// written, with the metadata the API server returned. A change that removes annotations (the refresh
// request) is written only over the app as read: when the app changed
// since, an annotation that now holds another value is kept, so a refresh
// asked for again meanwhile is not lost.
//
// The app is first fitted within StatusBudget (Fit); a write the API
// server still refuses as too large (long messages) is retried once with
// every message cut to 4 KiB and the lists fitted within an eighth of the
// budget.
func (p *Patch) Flush(ctx context.Context) error {
	Fit(p.app, StatusBudget, p.clock())
	data, unchanged, err := p.pending()
	if unchanged {
		return nil
	}
	if err == nil {
		err = p.write(ctx, data)
	}
	if tooLarge(err) {
		shortenMessages(p.app)
		Fit(p.app, StatusBudget/8, p.clock())
		if data, _, err = p.pending(); err == nil {
			err = p.write(ctx, data)
		}
	}
	if err != nil {
		return fmt.Errorf("write application %s: %w", p.app.Name, err)
	}
	p.base = p.app.DeepCopy()
	p.quietMaxAge, p.staged = 0, nil
	return nil
}

// pending returns the merge patch from the base to the app, or unchanged
// when there is nothing to write: no change, or a quiet change of nothing
// but the comparison timestamps while the written ones are recent. The
// patch is built once, for the check and the write alike (a quiet refresh
// of every idle app is the most common flush, and reflect.DeepEqual
// answers it without a patch).
func (p *Patch) pending() (data []byte, unchanged bool, err error) {
	base := p.base.Status.ReconciledAt
	if p.quietMaxAge != 0 && base != nil && p.now().Sub(base.Time) < p.quietMaxAge && OnlyTimestamps(p.app, p.base) {
		return nil, true, nil
	}
	if reflect.DeepEqual(p.app, p.base) {
		return nil, true, nil
	}
	data, err = mergePatch(p.base, p.app)
	if err != nil {
		return nil, false, fmt.Errorf("build patch: %w", err)
	}
	return data, emptyPatch(data), nil
}

// write sends data, the merge patch from the base to the app. A change
// that removes annotations is sent only over the app as read (see Flush).
func (p *Patch) write(ctx context.Context, data []byte) error {
	removed := removedAnnotations(p.base, p.app)
	if len(removed) == 0 {
		return p.w.patch(ctx, p.app, p.base, p.staged, client.RawPatch(types.MergePatchType, data))
	}
	locked := client.MergeFromWithOptions(p.base, client.MergeFromWithOptimisticLock{})
	err := p.w.patch(ctx, p.app, p.base, p.staged, locked)
	if !apierrors.IsConflict(err) {
		return err
	}
	fresh := &v1alpha1.Application{}
	if err := p.w.reader.Get(ctx, client.ObjectKeyFromObject(p.app), fresh); err != nil {
		return err
	}
	for _, k := range removed {
		if v, ok := fresh.Annotations[k]; ok && v != p.base.Annotations[k] {
			if p.app.Annotations == nil {
				p.app.Annotations = map[string]string{}
			}
			p.app.Annotations[k] = v
		}
	}
	return p.w.patch(ctx, p.app, p.base, p.staged, client.MergeFrom(p.base))
}

// tooLarge reports a write refused for its size: by the API server (413,
// "request is too large") or by etcd ("request is too large", gRPC's
// "message larger than max").
func tooLarge(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsRequestEntityTooLargeError(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "request is too large") || strings.Contains(msg, "message larger than max")
}

func (p *Patch) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// removedAnnotations are the annotations base has and app does not.
func removedAnnotations(base, app *v1alpha1.Application) []string {
	var out []string
	for k := range base.Annotations {
		if _, ok := app.Annotations[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// sameApp reports whether writing a over b changes nothing. Most equal
// apps are equal as Go values (a is a copy of b, and a refresh that
// changed nothing leaves it so), which reflect.DeepEqual tells with a few
// allocations (BenchmarkOnlyTimestamps); others are when the merge patch
// between them is empty: times equal to the second the API server keeps,
// or nil and empty lists. That patch is the write's own, not a semantic
// comparison of the whole app beside it (which, for a root of a thousand
// children, allocated as much as the patch).
func sameApp(a, b *v1alpha1.Application) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	data, err := mergePatch(b, a)
	return err == nil && emptyPatch(data)
}

// emptyPatch reports whether a merge patch changes nothing.
func emptyPatch(data []byte) bool { return string(data) == "{}" }

// OnlyTimestamps reports whether app differs from base in nothing but the
// comparison timestamps (or in nothing). It sets app's timestamps to
// base's while it compares, without copying the app, and puts them back:
// no one else may read app meanwhile.
func OnlyTimestamps(app, base *v1alpha1.Application) bool {
	reconciled, observed := app.Status.ReconciledAt, app.Status.ObservedAt
	defer func() { app.Status.ReconciledAt, app.Status.ObservedAt = reconciled, observed }()
	app.Status.ReconciledAt, app.Status.ObservedAt = base.Status.ReconciledAt, base.Status.ObservedAt
	return sameApp(app, base)
}
