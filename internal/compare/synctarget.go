package compare

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/destination"
)

// SyncTarget is what one sync operation works on: the objects the app's
// sources render at the operation's revision, prepared for the
// destination, and the app's live objects there.
type SyncTarget struct {
	// Revision is the revision rendered: the commit of the first source
	// when it is one, else the operation's revision.
	Revision string
	Desired  []*unstructured.Unstructured
	Live     []*unstructured.Unstructured
}

// SyncTarget renders app as op wants it (OperationTarget) for tgt and
// lists the live objects of the kinds it renders or last synced; the
// project's signatureKeys must have signed each Git commit. It is the
// one call a sync operation makes into rendering and the live cache.
func (c *Comparer) SyncTarget(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, op *v1alpha1.SyncOperation, s *Settings) (*SyncTarget, error) {
	res, err := c.Render(ctx, tgt, OperationTarget(app, op), s, RenderOptions{SignatureKeys: SignatureKeys(proj)})
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	revision := op.Revision
	if len(res.Revisions) > 0 {
		revision = res.Revisions[0]
	}
	return c.syncTarget(ctx, tgt, app, s, revision, res.Objects)
}

// syncTarget prepares objs for tgt and lists the live objects beside them.
func (c *Comparer) syncTarget(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, revision string, objs []*unstructured.Unstructured) (*SyncTarget, error) {
	out := &SyncTarget{Revision: revision}
	var err error
	if out.Desired, err = PrepareDesired(tgt, app, objs, s); err != nil {
		return nil, err
	}
	out.Live, err = c.Live(ctx, tgt, app, s.TrackingOf(app), KindsOf(out.Desired, app.Status.Resources))
	if err != nil {
		return nil, err
	}
	return out, nil
}
