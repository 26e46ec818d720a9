package compare

import (
	"context"
	"errors"
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/destination"
)

// Manifests gives a sync operation the objects it carries itself in
// operation.sync.manifests, as `argocd app sync --local` sends them, in
// place of the app's sources: nothing is rendered. The live objects come
// from the Comparer's live cache as for any sync.
type Manifests struct {
	Comparer *Comparer
}

// SyncTarget decodes op.Manifests, prepares them for tgt and lists the
// live objects beside them. The revision is the operation's own: local
// manifests come from no commit, so a project that requires signed
// commits refuses them, as Argo CD does.
func (m Manifests) SyncTarget(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, op *v1alpha1.SyncOperation, s *Settings) (*SyncTarget, error) {
	if len(SignatureKeys(proj)) > 0 {
		return nil, errors.New("cannot use local manifests when source integrity is enforced (the project requires signed commits)")
	}
	objs, err := application.DecodeManifests(op.Manifests)
	if err != nil {
		return nil, fmt.Errorf("local manifests: %w", err)
	}
	return m.Comparer.syncTarget(ctx, tgt, app, s, op.Revision, objs)
}
