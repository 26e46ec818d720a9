package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// rendered is what an app's sources render to, and how each is rendered
// (Helm, Kustomize or Directory, in spec order).
type rendered struct {
	*render.Result
	types []string
}

// renderOptions say how to render an app.
type renderOptions struct {
	// fresh renders again instead of reading the render cache.
	fresh bool
}

// renderApp resolves every Git source of app to a commit, timing the
// fetch for the metrics, then renders the app at those commits for tgt,
// the destination whose version Helm sees. app is not changed.
func (r *Reconciler) renderApp(ctx context.Context, tgt *target, app *v1alpha1.Application, ro renderOptions) (*rendered, error) {
	r.refreshCredentials(ctx)
	pinned := app.DeepCopy()
	for _, src := range sourcesOf(&pinned.Spec) {
		if src.IsHelmRepo() || src.IsOCIArtifact() {
			continue // resolved by the engine (a chart version, an artifact digest)
		}
		start := time.Now()
		sha, err := r.repos.Resolve(ctx, src.RepoURL, src.TargetRevision)
		r.metrics.gitFetched(src.RepoURL, time.Since(start), err)
		if err != nil {
			return nil, fmt.Errorf("application %s: %w", app.Name, err)
		}
		if sha != "" {
			src.TargetRevision = sha
		}
	}
	s, err := r.settings.get(ctx, r.client, r.opts)
	if err != nil {
		return nil, err
	}
	res, err := r.engine.RenderAppWith(ctx, pinned, render.AppOptions{Capabilities: tgt.capabilities(ctx), Fresh: ro.fresh, Kustomize: s.Kustomize, Limits: s.Limits})
	if err != nil {
		return nil, err
	}
	return &rendered{Result: res, types: typeNames(res.Types)}, nil
}

// sourcesOf returns pointers to the spec's sources, so they can be changed
// in place.
func sourcesOf(spec *v1alpha1.ApplicationSpec) []*v1alpha1.ApplicationSource {
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

// renderLocal renders the folder dir in place of the app's single source,
// as `argocd app diff --local` does: dir is the source's path on disk.
func (r *Reconciler) renderLocal(ctx context.Context, tgt *target, app *v1alpha1.Application, dir string) (*rendered, error) {
	if app.Spec.Source == nil {
		return nil, errors.New("a local folder can replace the source of a single-source application only")
	}
	tree, err := source.ReadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	s, err := r.settings.get(ctx, r.client, r.opts)
	if err != nil {
		return nil, err
	}
	src := *app.Spec.Source.DeepCopy()
	src.RepoURL, src.Path, src.Chart, src.TargetRevision = dir, ".", "", ""
	res, err := r.engine.Render(ctx, &render.Request{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Project: app.Spec.Project, Source: src, Tree: tree,
		Capabilities: tgt.capabilities(ctx), Kustomize: s.Kustomize,
	})
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", dir, err)
	}
	return &rendered{Result: res, types: typeNames(res.Types)}, nil
}

// operationTarget is the app as a sync operation wants it: a rollback
// names the source and revision of a history entry, a sync may name a
// revision.
func operationTarget(app *v1alpha1.Application, op *v1alpha1.SyncOperation) *v1alpha1.Application {
	target := app.DeepCopy()
	multi := target.Spec.HasMultipleSources()
	switch {
	case multi && len(op.Sources) > 0:
		target.Spec.Sources = op.DeepCopy().Sources
	case !multi && op.Source != nil:
		target.Spec.Source = op.Source.DeepCopy()
	}
	sources := sourcesOf(&target.Spec)
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
