package compare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// Rendered is what an app's sources render to, and how each is rendered
// (Helm, Kustomize or Directory, in spec order).
type Rendered struct {
	*render.Result
	SourceTypes []string
}

// RenderOptions say how to render an app.
type RenderOptions struct {
	// Fresh renders again instead of reading the render cache.
	Fresh bool
	// RevisionMaxAge lets a resolution reuse the refs of a repository
	// listed no longer ago than this (see source.ResolveOptions); zero
	// lists them now.
	RevisionMaxAge time.Duration
	// SignatureKeys, when set, are the key IDs (the project's
	// signatureKeys) one of which must have signed each Git commit
	// rendered.
	SignatureKeys []string
}

// Render resolves every Git source of app to a commit, timing the fetch
// (Options.GitFetched), then renders the app at those commits for tgt, the
// destination whose version Helm sees. app is not changed.
func (c *Comparer) Render(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, ro RenderOptions) (*Rendered, error) {
	c.refreshCredentials(ctx)
	pinned := app.DeepCopy()
	for _, src := range SourcesOf(&pinned.Spec) {
		if !source.KindOf(src).PinsRevision() {
			continue // resolved by the engine (a chart version, an artifact digest)
		}
		start := time.Now()
		sha, err := c.repos.ResolveWith(ctx, src.RepoURL, src.TargetRevision, source.ResolveOptions{MaxAge: ro.RevisionMaxAge})
		c.gitFetched(src.RepoURL, time.Since(start), err)
		if err != nil {
			return nil, fmt.Errorf("application %s: %w", app.Name, err)
		}
		if sha != "" {
			src.TargetRevision = sha
		}
	}
	if len(ro.SignatureKeys) > 0 {
		if err := c.verifySignatures(ctx, app, pinned, ro.SignatureKeys); err != nil {
			return nil, err
		}
	}
	res, err := c.engine.RenderAppWith(ctx, pinned, render.AppOptions{Capabilities: tgt.Capabilities(ctx), Fresh: ro.Fresh, Kustomize: s.Kustomize, Limits: s.Limits,
		InstanceName: s.TrackingOf(app).AppName})
	if err != nil {
		return nil, err
	}
	return &Rendered{Result: res, SourceTypes: typeNames(res.Types)}, nil
}

// SourcesOf returns pointers to the spec's sources, so they can be changed
// in place.
func SourcesOf(spec *v1alpha1.ApplicationSpec) []*v1alpha1.ApplicationSource {
	if spec.HasMultipleSources() {
		out := make([]*v1alpha1.ApplicationSource, len(spec.Sources))
		for i := range spec.Sources {
			out[i] = &spec.Sources[i]
		}
		return out
	}
	if spec.Source != nil {
		return []*v1alpha1.ApplicationSource{spec.Source}
	}
	return nil
}

// typeNames are the source types as the status spells them.
func typeNames(types []render.SourceType) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = string(t)
	}
	return out
}

// RenderLocal renders the folder dir in place of the app's single source,
// as `argocd app diff --local` does: dir is the source's path on disk.
func (c *Comparer) RenderLocal(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, dir string) (*Rendered, error) {
	if app.Spec.Source == nil {
		return nil, errors.New("a local folder can replace the source of a single-source application only")
	}
	tree, err := source.ReadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	src := *app.Spec.Source.DeepCopy()
	src.RepoURL, src.Path, src.Chart, src.TargetRevision = dir, ".", "", ""
	res, err := c.engine.Render(ctx, &render.Request{
		AppName: s.TrackingOf(app).AppName, Namespace: app.Spec.Destination.Namespace, Project: app.Spec.Project, Source: src, Tree: tree,
		Capabilities: tgt.Capabilities(ctx), Kustomize: s.Kustomize,
	})
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", dir, err)
	}
	return &Rendered{Result: res, SourceTypes: typeNames(res.Types)}, nil
}

// OperationTarget is the app as a sync operation wants it: a rollback
// names the source and revision of a history entry, a sync may name a
// revision.
func OperationTarget(app *v1alpha1.Application, op *v1alpha1.SyncOperation) *v1alpha1.Application {
	target := app.DeepCopy()
	multi := target.Spec.HasMultipleSources()
	switch {
	case multi && len(op.Sources) > 0:
		target.Spec.Sources = op.DeepCopy().Sources
	case !multi && op.Source != nil:
		target.Spec.Source = op.Source.DeepCopy()
	}
	sources := SourcesOf(&target.Spec)
	if multi {
		for i, rev := range op.Revisions {
			if rev != "" && i < len(sources) {
				sources[i].TargetRevision = rev
			}
		}
	} else if op.Revision != "" && len(sources) == 1 {
		sources[0].TargetRevision = op.Revision
	}
	return target
}
