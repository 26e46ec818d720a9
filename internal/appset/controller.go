package appset

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/source"
)

// Options configure a Controller.
type Options struct {
	// Namespace holds the ApplicationSets, their Applications and the
	// cluster Secrets (default argocd).
	Namespace string
	// Mirrors map repository URLs to local paths (added to argocd-cm's
	// wavecd.mirrors, read at start).
	Mirrors source.Mirrors
	// CacheDir holds the git generators' clones (default: a folder in the
	// user cache dir). Do not share it with the Application controller's.
	CacheDir string
	// Workers is the number of parallel reconciles (default 5).
	Workers int
	// GitRequeue is how often git generators are read again (default 3
	// minutes, as Argo CD).
	GitRequeue time.Duration
	// NewGitFileGlobbing makes `*` in git files generator paths stay within
	// one directory (Argo CD's --enable-new-git-file-globbing).
	NewGitFileGlobbing bool
	// SCM says which Git hosting services the SCM provider and pull
	// request generators may call (Argo CD's --enable-scm-providers and
	// --allowed-scm-providers).
	SCM SCMPolicy
	// Apps, when set, is a cache of the namespace's Applications that
	// another controller of the process keeps (the Application
	// controller's): the ApplicationSet controller reads and watches the
	// apps there instead of keeping a copy of each of its own. New adds
	// its index to it, so it must be called before Apps starts.
	Apps cache.Cache
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "argocd"
	}
	if o.Workers == 0 {
		o.Workers = 5
	}
	if o.GitRequeue == 0 {
		o.GitRequeue = DefaultGitRequeue
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		o.CacheDir = filepath.Join(dir, "wavecd", "applicationset-repos")
	}
}

// Controller reconciles ApplicationSets. It is a manager.Runnable: Start
// blocks until ctx ends. Added to a manager with leader election, it runs
// on the leader only; it keeps its own cache of the namespace's
// ApplicationSets, Applications and cluster Secrets.
type Controller struct {
	cache     cache.Cache
	ctrl      controller.Controller
	rec       *Reconciler
	discovery discovery.DiscoveryInterface
}

// New builds a controller for the cluster cfg points at.
func New(cfg *rest.Config, opts Options) (*Controller, error) {
	opts.defaults()
	cfg = rest.CopyConfig(cfg)
	kube.DefaultRateLimit(cfg)
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	ns := map[string]cache.Config{opts.Namespace: {}}
	c, cached, err := kube.NamespaceCache(cfg, scheme, opts.Namespace, map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Namespaces: ns, Label: labels.SelectorFromSet(labels.Set{cluster.LabelSecretType: cluster.SecretTypeCluster})},
	})
	if err != nil {
		return nil, err
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client: %w", err)
	}
	apps := c
	if opts.Apps != nil {
		apps = opts.Apps
		if err := apps.IndexField(context.Background(), &v1alpha1.Application{}, ownerIndex, ownerOf); err != nil {
			return nil, fmt.Errorf("index applications by owner: %w", err)
		}
	}
	rec := &Reconciler{
		client: cached, apps: apps, apiReader: direct, resources: KubeResources{Client: dyn}, opts: opts, scheme: scheme,
		repos:    source.NewRepos(source.ReposOptions{CacheDir: opts.CacheDir, Mirrors: opts.Mirrors}),
		clusters: cluster.Registry{Reader: cached, Namespace: opts.Namespace},
		results:  &resultCache{entries: map[string]resultEntry{}},
		failures: &failureCounter{counts: map[string]int{}},
		now:      time.Now,
	}
	rec.credentials = &source.SecretCredentials{Reader: direct, Namespace: opts.Namespace, Now: rec.now}
	ctrl, err := controller.NewUnmanaged("applicationset", controller.Options{
		Reconciler: rec, MaxConcurrentReconciles: opts.Workers, SkipNameValidation: ptrTrue(),
	})
	if err != nil {
		return nil, fmt.Errorf("create applicationset controller: %w", err)
	}
	if err := rec.watch(ctrl, c, apps); err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build discovery client: %w", err)
	}
	return &Controller{cache: c, ctrl: ctrl, rec: rec, discovery: disco}, nil
}

func ptrTrue() *bool { b := true; return &b }

// Start runs the controller until ctx ends. While the API server does not
// serve ApplicationSets (no CRD) it waits, checking every crdPoll.
func (c *Controller) Start(ctx context.Context) error {
	if !c.waitForCRD(ctx) {
		return nil
	}
	if c.rec.opts.Apps == nil {
		if err := c.cache.IndexField(ctx, &v1alpha1.Application{}, ownerIndex, ownerOf); err != nil {
			return fmt.Errorf("index applications by owner: %w", err)
		}
	}
	if err := c.rec.loadMirrors(ctx); err != nil {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // stopped before it started: not a failure
		}
		return err
	}
	if err := kube.RunWithCache(ctx, c.cache, c.ctrl.Start); err != nil {
		return fmt.Errorf("applicationset controller: %w", err)
	}
	return nil
}

// crdPoll is how often Start looks for the ApplicationSet CRD when it is
// not installed.
const crdPoll = 15 * time.Second

// waitForCRD returns once the API server serves ApplicationSets, so that a
// cluster without the CRD idles the controller instead of failing the
// process it runs in; false means ctx ended first.
func (c *Controller) waitForCRD(ctx context.Context) bool {
	gv := v1alpha1.Group + "/" + v1alpha1.Version
	warned := false
	for {
		list, err := c.discovery.ServerResourcesForGroupVersion(gv)
		if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "applicationsets" }) {
			return true
		}
		if !warned {
			slog.WarnContext(ctx, "the ApplicationSet CRD is not installed; the ApplicationSet controller waits for it", "err", err)
			warned = true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(crdPoll):
		}
	}
}

// loadMirrors adds argocd-cm's wavecd.mirrors to the flags' (flags win)
// once at start, as the Application controller does.
func (r *Reconciler) loadMirrors(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: settingsConfigMap}, cm)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("read %s: %w", settingsConfigMap, err)
	}
	if err != nil || cm.Data[source.MirrorsConfigKey] == "" {
		return nil //nolint:nilerr // no argocd-cm: no mirrors of its own
	}
	mirrors, err := source.ParseMirrorsConfig(cm.Data[source.MirrorsConfigKey])
	if err != nil {
		return err
	}
	maps.Copy(mirrors, r.opts.Mirrors) // both normalized; the flags win
	r.repos = source.NewRepos(source.ReposOptions{CacheDir: r.opts.CacheDir, Mirrors: mirrors})
	return nil
}

// settingsConfigMap is Argo CD's settings ConfigMap.
const settingsConfigMap = "argocd-cm"
