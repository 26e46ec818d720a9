package compare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/plugin"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// Options configure a Comparer.
type Options struct {
	// Namespace holds argocd-cm, the repository Secrets and the
	// Applications (default argocd).
	Namespace string
	// CacheDir holds Git clones.
	CacheDir string
	// Mirrors map repository URLs to local paths; LoadMirrors adds
	// argocd-cm's wavecd.mirrors to them (these win).
	Mirrors source.Mirrors
	// PluginsDir holds Config Management Plugin files and the sockets of
	// plugin sidecars (see internal/plugin); empty means no plugins.
	PluginsDir string
	// Reader reads argocd-cm and the repository Secrets, from the API
	// server.
	Reader client.Reader
	// Apps, when set, is the controller's cache of the Applications of
	// its namespaces: child Applications at the local destination are read from
	// it, the cache whose events refresh a parent, so a parent never reads
	// a child older than the change that woke it. Without it they are
	// listed like any other kind.
	Apps client.Reader
	// Now is the clock of repository credential refreshes (default
	// time.Now).
	Now func() time.Time
	// GitFetched is told how long each Git fetch took and how it ended;
	// nil tells no one.
	GitFetched func(repo string, took time.Duration, err error)
}

// Comparer compares Applications with their destinations: it renders an
// app's sources, lists its live objects, predicts what an apply would
// store and diffs the two (compare.go). The controller keeps one for its
// lifetime; `wavecd app diff` and the API server use one through Differ.
// It is safe for concurrent use once LoadMirrors has run.
type Comparer struct {
	opts        Options
	repos       *source.Repos
	engine      *render.Engine
	credentials *source.SecretCredentials
	memo        memo
	// keys is the last argocd-gpg-keys-cm read (signatures.go).
	keys keyringCache
}

// New builds a Comparer; nothing is read until it is used.
func New(opts Options) *Comparer {
	if opts.Namespace == "" {
		opts.Namespace = "argocd"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Comparer{opts: opts}
	c.repos, c.engine = newEngine(opts, opts.Mirrors)
	if opts.Reader != nil {
		c.credentials = &source.SecretCredentials{Reader: opts.Reader, Namespace: opts.Namespace, Now: opts.Now}
	}
	return c
}

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

// Repos are the Git repositories the comparer renders from.
func (c *Comparer) Repos() *source.Repos { return c.repos }

// LoadMirrors adds argocd-cm's wavecd.mirrors to the Comparer's own
// (Options.Mirrors win) and rebuilds the engine with them. It runs before
// the first comparison: a change to wavecd.mirrors takes effect on the
// next start.
func (c *Comparer) LoadMirrors(ctx context.Context) error {
	data, err := readSettingsData(ctx, c.opts.Reader, c.opts.Namespace)
	if err != nil || data[keyMirrors] == "" {
		return err
	}
	fromCM, err := source.ParseMirrorsConfig(data[keyMirrors])
	if err != nil {
		return fmt.Errorf("argocd-cm key %s: %w", keyMirrors, err)
	}
	mirrors := source.Mirrors{}
	for url, path := range fromCM {
		mirrors.Add(url, path)
	}
	for url, path := range c.opts.Mirrors {
		mirrors.Add(url, path)
	}
	c.repos, c.engine = newEngine(c.opts, mirrors)
	return nil
}

// refreshCredentials hands the repository Secrets of the namespace to the
// engine when they are due to be read again. A broken Secret is logged and
// left out; the others still apply.
func (c *Comparer) refreshCredentials(ctx context.Context) {
	if c.credentials == nil {
		return
	}
	creds, fresh, err := c.credentials.Due(ctx)
	if err != nil {
		logctx.From(ctx).Warn("repository secrets", "err", err)
	}
	if fresh {
		c.engine.SetCredentials(creds)
	}
}

func (c *Comparer) gitFetched(repo string, took time.Duration, err error) {
	if c.opts.GitFetched != nil {
		c.opts.GitFetched(repo, took, err)
	}
}

// DefaultCacheDir is where Git clones go when no folder is named: a folder
// in the user cache dir (the temporary dir without one).
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "wavecd", "repos")
}
