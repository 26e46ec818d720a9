package destination

import (
	"context"
	"slices"
	stdsync "sync"
	"time"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/render"
)

// Bounds of how a target's capabilities are kept.
const (
	// unwatchedMaxAge is how long the API versions of a target whose
	// CustomResourceDefinitions nobody watches (a comparison outside a
	// controller) are kept.
	unwatchedMaxAge = 10 * time.Second
	// readRetry is how long a failed read of the server version or of
	// the API versions is kept before it is read again.
	readRetry = 10 * time.Second
)

// capabilities is what Helm's .Capabilities sees of a target: the server
// version, read once, and the API versions: what discovery listed, read
// again after a CustomResourceDefinition changed, and what the
// established CRDs serve, from a watch of them, so a chart testing for a
// kind that an earlier wave installed renders with it even while the
// API server's discovery lags behind the CRD.
type capabilities struct {
	mu stdsync.Mutex
	// version is the server's semantic version; versionErrAt is when it
	// last failed to read.
	version      string
	versionErrAt time.Time
	// discovered is what discovery listed, at discoveredAt; failed says
	// that discovery failed.
	discovered   []string
	discoveredAt time.Time
	failed       bool
	// crds follows the CRDs (nil: not watched); changed is when one last
	// changed, composedAt the change current accounts for.
	crds       *kube.CRDWatch
	changed    time.Time
	composedAt time.Time
	current    render.Capabilities
}

// crdChanged records that a CustomResourceDefinition changed.
func (c *capabilities) crdChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changed = time.Now()
}

// stale reports whether discovery must be asked again at now.
func (c *capabilities) stale(now time.Time) bool {
	switch {
	case c.discoveredAt.IsZero():
		return true
	case c.failed:
		return now.Sub(c.discoveredAt) > readRetry
	case c.crds == nil:
		return now.Sub(c.discoveredAt) > unwatchedMaxAge
	}
	return c.changed.After(c.discoveredAt)
}

// Capabilities describes the destination for Helm as Argo CD does: the
// server version as a semantic version and every group/version and
// group/version/Kind it serves. A failure to read either keeps what was
// read before (or Helm's defaults), and is logged.
func (t *Target) Capabilities(ctx context.Context) render.Capabilities {
	c := &t.caps
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	version := c.version
	if version == "" && now.Sub(c.versionErrAt) > readRetry {
		v, err := t.Kube.ServerVersion()
		if err != nil {
			c.versionErrAt = now
			logctx.From(ctx).Warn("read server version", "server", t.Server, "err", err)
		}
		c.version = v
	}
	recompose := c.version != version || c.changed != c.composedAt
	if c.stale(now) {
		versions, err := t.Kube.APIVersions()
		c.discoveredAt, c.failed = now, err != nil
		if err != nil {
			logctx.From(ctx).Warn("discover API versions", "server", t.Server, "err", err)
		} else {
			c.discovered = versions
		}
		recompose = true
	}
	if recompose {
		c.current = render.NewCapabilities(c.version, c.compose())
		c.composedAt = c.changed
	}
	return c.current
}

// compose is the union of what discovery listed and what the established
// CRDs serve, sorted.
func (c *capabilities) compose() []string {
	if c.crds == nil {
		return c.discovered
	}
	all := append(slices.Clone(c.discovered), c.crds.Served()...)
	slices.Sort(all)
	return slices.Compact(all)
}

// watchCRDs follows the target's CustomResourceDefinitions until ctx
// ends, for Capabilities.
func (t *Target) watchCRDs(ctx context.Context) {
	w, err := t.Kube.WatchCRDs(ctx, t.caps.crdChanged)
	if err != nil {
		logctx.From(ctx).Warn("watch custom resource definitions", "server", t.Server, "err", err)
		return
	}
	t.caps.mu.Lock()
	defer t.caps.mu.Unlock()
	t.caps.crds = w
}
