package render

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/plugin"
	"github.com/wavecd/wavecd/internal/source"
)

// EngineOptions configure an Engine.
type EngineOptions struct {
	// Repos resolves and reads Git repositories. Required.
	Repos *source.Repos
	// Charts fetches charts from Helm repositories; nil disables them.
	Charts *source.Charts
	// CacheSize bounds the render cache in entries (default
	// DefaultCacheEntries, and DefaultCacheBytes of rendered manifests; a
	// negative value disables the cache).
	CacheSize int
	// Plugins are the Config Management Plugins; nil means none.
	Plugins *plugin.Set
}

// Engine renders Applications: it checks out every source, picks the
// renderer for each, and caches results by commit SHA, source spec and
// destination capabilities. It is safe for concurrent use.
type Engine struct {
	repos     *source.Repos
	charts    *source.Charts
	plugins   *plugin.Set
	renderers map[SourceType]Renderer
	cache     *Cache
}

// NewEngine returns an Engine.
func NewEngine(opts EngineOptions) *Engine {
	size := cmp.Or(opts.CacheSize, DefaultCacheEntries)
	e := &Engine{
		repos:   opts.Repos,
		charts:  opts.Charts,
		plugins: opts.Plugins,
		renderers: map[SourceType]Renderer{
			TypeDirectory: Directory{},
			TypeHelm:      &Helm{Charts: opts.Charts},
			TypeKustomize: Kustomize{Helm: &Helm{Charts: opts.Charts}},
			TypePlugin:    &Plugin{Set: opts.Plugins},
		},
	}
	if size > 0 {
		e.cache = NewCache(CacheLimits{Entries: size, Bytes: DefaultCacheBytes})
	}
	return e
}

// SetCredentials replaces the credentials of Git repositories, Helm
// repositories and OCI registries, e.g. with what
// source.CredentialsFromSecrets read from the repository Secrets. Cached
// renders stay valid: credentials change access, not content.
func (e *Engine) SetCredentials(creds source.Credentials) {
	e.repos.SetCredentials(creds)
	if e.charts != nil {
		e.charts.SetCredentials(creds)
	}
}

// AppOptions configure RenderAppWith.
type AppOptions struct {
	// Capabilities of the destination cluster.
	Capabilities Capabilities
	// Fresh renders every source again instead of reading the cache (a
	// hard refresh); the new results replace the cached ones.
	Fresh bool
	// Kustomize are argocd-cm's kustomize build options.
	Kustomize KustomizeSettings
	// Limits bound what the app's sources read and produce.
	Limits Limits
	// InstanceName is the app's name in tracking and in
	// $ARGOCD_APP_NAME: `<namespace>_<name>` for an app outside the
	// control namespace (default: its name).
	InstanceName string
}

// RenderApp renders every source of app for a destination with caps.
// Objects of several sources are concatenated in spec order.
func (e *Engine) RenderApp(ctx context.Context, app *v1alpha1.Application, caps Capabilities) (*Result, error) {
	return e.RenderAppWith(ctx, app, AppOptions{Capabilities: caps})
}

// RenderAppWith is RenderApp with options.
func (e *Engine) RenderAppWith(ctx context.Context, app *v1alpha1.Application, opts AppOptions) (*Result, error) {
	sources := app.Spec.GetSources()
	if len(sources) == 0 {
		return nil, fmt.Errorf("application %s: spec.source or spec.sources is required", app.Name)
	}
	checked, err := e.checkoutSources(ctx, app.Spec.HasMultipleSources(), sources)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", app.Name, err)
	}
	out := &Result{}
	budget := NewBudget(opts.Limits.withDefaults().MaxAppSize, KeyMaxAppSize)
	for i, src := range sources {
		if isRefOnly(&src) {
			out.Revisions = append(out.Revisions, checked.revision(i))
			typ, _ := DetectType(&src, checked.trees[i])
			out.Types = append(out.Types, typ)
			continue
		}
		req := &Request{
			AppName: cmp.Or(opts.InstanceName, app.Name), Namespace: app.Spec.Destination.Namespace, Project: app.Spec.Project, Source: src,
			Tree: checked.trees[i], Refs: checked.refs, Capabilities: opts.Capabilities, Fresh: opts.Fresh, Kustomize: opts.Kustomize, Limits: opts.Limits,
		}
		res, err := e.Render(ctx, req)
		if err == nil {
			// A cached result was counted when it was rendered: charge
			// its size to the app's total now.
			err = budget.Take("rendered manifests of the app so far", res.Size)
		}
		if err != nil {
			return nil, fmt.Errorf("application %s: %s: %w", app.Name, sourceField(app.Spec.HasMultipleSources(), i), err)
		}
		out.Size += res.Size
		out.Objects = append(out.Objects, res.Objects...)
		out.Warnings = append(out.Warnings, res.Warnings...)
		out.Revisions = append(out.Revisions, firstNonEmpty(checked.revision(i), firstRevision(res)))
		out.Types = append(out.Types, res.Types...)
	}
	return out, nil
}

// detect returns how req is rendered. A source that names no type goes to
// the first plugin whose discovery rules accept it, as in Argo CD, before
// its files are looked at; req is then a copy naming that plugin.
func (e *Engine) detect(ctx context.Context, req *Request) (SourceType, *Request, error) {
	typ, err := DetectType(&req.Source, req.Tree)
	if err != nil || len(explicitTypes(&req.Source)) > 0 || source.KindOf(&req.Source).Packaged() || e.plugins.Dir() == "" {
		return typ, req, err
	}
	dir, err := appPath(req.Tree, req.Source.Path)
	if err != nil {
		return "", nil, err
	}
	env, err := pluginEnv(req)
	if err != nil {
		return "", nil, err
	}
	name, err := e.plugins.Discover(ctx, &plugin.Request{AppPath: dir, Env: env}, req.Tree)
	if err != nil || name == "" {
		return typ, req, err
	}
	found := *req
	found.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: name}
	return TypePlugin, &found, nil
}

func firstRevision(r *Result) string {
	if len(r.Revisions) > 0 {
		return r.Revisions[0]
	}
	return ""
}

// Render renders one source, through the cache when every tree it reads
// is a Git commit.
func (e *Engine) Render(ctx context.Context, req *Request) (*Result, error) {
	key, cacheable := cacheKey(req, e.plugins.Fingerprint())
	caps := req.Capabilities.Key()
	if cacheable && e.cache != nil && !req.Fresh {
		if res, ok := e.cache.Get(key, caps); ok {
			return res, nil
		}
	}
	typ, req, err := e.detect(ctx, req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := e.renderers[typ].Render(ctx, req)
	if err != nil {
		return nil, err
	}
	res.Types = []SourceType{typ}
	if res.Objects, err = expandLists(res.Objects); err != nil {
		return nil, err
	}
	slog.DebugContext(ctx, "rendered source", "app", req.AppName, "type", typ, "objects", len(res.Objects), "took", time.Since(start))
	if cacheable && e.cache != nil {
		if typ == TypeDirectory {
			caps = "" // a directory renders the same on every cluster
		}
		e.cache.Put(key, caps, res)
	}
	return res, nil
}
