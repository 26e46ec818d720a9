package destination

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// Target is one destination cluster as the controller reaches it: its
// clients, the live cache of the kinds apps manage there, what dry runs
// predicted there, and the capabilities Helm sees (capabilities.go).
type Target struct {
	// Local says the target is the cluster the controller runs in, reached
	// with the controller's own configuration.
	Local bool
	// Server is the API server URL the target was built for.
	Server string
	Kube   *kube.Cluster
	Live   *kube.LiveCache
	// config is the credentials a remote target was built with.
	config      cluster.Config
	predictions Predictions
	caps        capabilities
	// stop ends a remote target's informers.
	stop context.CancelFunc
}

// NewTarget connects to the cluster cfg points at; its live cache starts
// with Targets.Start (until then it reads the API server).
func NewTarget(cfg *rest.Config) (*Target, error) {
	k, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Target{Kube: k, Live: kube.NewLiveCache(k)}, nil
}

// Predictions are the dry runs made at the target; a sync reads them as
// its wsync.DryRunCache.
func (t *Target) Predictions() *Predictions { return &t.predictions }

// namespaceKind is the kind NamespaceExists watches.
var namespaceKind = schema.GroupKind{Kind: "Namespace"}

// NamespaceExists reports whether namespace name is known to exist (and
// not being deleted) at the target, from a watch of the target's
// namespaces that the first call starts; false when it is not, or not
// known yet. A sync's CreateNamespace then need not ask the API server.
func (t *Target) NamespaceExists(ctx context.Context, name string) bool {
	if err := t.Live.EnsureWatched([]schema.GroupKind{namespaceKind}); err != nil {
		logctx.From(ctx).Debug("watch namespaces", "server", t.Server, "err", err)
		return false
	}
	exists, known := t.Live.Exists(namespaceKind, "", name)
	return exists && known
}
