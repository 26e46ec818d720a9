package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/plugin"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// newEngine builds the render engine over Git repositories and Helm or
// OCI chart repositories, both honouring mirrors.
func newEngine(opts Options, mirrors source.Mirrors) (*source.Repos, *render.Engine) {
	repos := source.NewRepos(source.ReposOptions{CacheDir: opts.CacheDir, Mirrors: mirrors})
	charts := source.NewCharts(source.ChartsOptions{Mirrors: mirrors})
	var plugins *plugin.Set
	if opts.PluginsDir != "" {
		plugins = plugin.NewSet(plugin.SetOptions{Dir: opts.PluginsDir})
	}
	return repos, render.NewEngine(render.EngineOptions{Repos: repos, Charts: charts, Plugins: plugins})
}

// loadMirrors adds argocd-cm's wavecd.mirrors to the controller's own
// (flags win) and rebuilds the engine with them; it runs once at start, so
// a change to wavecd.mirrors takes effect on the next start.
func (r *Reconciler) loadMirrors(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: SettingsConfigMap}, cm)
	if apierrors.IsNotFound(err) || (err == nil && cm.Data[keyMirrors] == "") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", SettingsConfigMap, err)
	}
	fromCM, err := source.ParseMirrorsConfig(cm.Data[keyMirrors])
	if err != nil {
		return fmt.Errorf("argocd-cm key %s: %w", keyMirrors, err)
	}
	mirrors := source.Mirrors{}
	for url, path := range fromCM {
		mirrors.Add(url, path)
	}
	for url, path := range r.opts.Mirrors {
		mirrors.Add(url, path)
	}
	r.repos, r.engine = newEngine(r.opts, mirrors)
	return nil
}

// refreshCredentials hands the repository Secrets of the controller's
// namespace to the engine when they are due to be read again. A broken
// Secret is logged and left out; the others still apply.
func (r *Reconciler) refreshCredentials(ctx context.Context) {
	creds, fresh, err := r.credentials.Due(ctx)
	if err != nil {
		logctx.From(ctx).Warn("repository secrets", "err", err)
	}
	if fresh {
		r.engine.SetCredentials(creds)
	}
}
