package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/shard"
	"github.com/wavecd/wavecd/internal/source"
)

// Options configure a Controller.
type Options struct {
	// Namespace holds the Applications, AppProjects and settings (default argocd).
	Namespace string
	// ApplicationNamespaces are more namespaces whose Applications the
	// controller reconciles (Argo CD's application.namespaces: globs, or
	// regular expressions between slashes); an app there must also be
	// permitted by its project's sourceNamespaces.
	ApplicationNamespaces []string
	// ArgoParity turns off what wavecd adds: child Application health and
	// the generic condition check.
	ArgoParity bool
	// ArgoCDCRD says the cluster's Application CRD is Argo CD's, which
	// drops a running sync's state and each resource's times: syncs write
	// neither, and a sync a restarted controller finds running starts
	// again instead of resuming.
	ArgoCDCRD bool
	// Hydrator hydrates apps with a spec.sourceHydrator: renders their dry
	// source and commits it to their branch (Argo CD's hydrator.enabled,
	// off by default as there). Off, such apps sync the sync source as it
	// is, with an UnsupportedFieldWarning.
	Hydrator bool
	// Mirrors map repository URLs to local paths (added to argocd-cm's).
	Mirrors source.Mirrors
	// HealthLibraryDir is a directory of Lua health checks in Argo CD's layout.
	HealthLibraryDir string
	// CacheDir holds Git clones (default: a folder in the user cache dir).
	CacheDir string
	// LeaderElection makes replicas elect one active controller.
	LeaderElection bool
	// LeaseDuration is how long standbys wait before taking over a lease
	// its holder stopped renewing, and RenewDeadline how long the leader
	// keeps retrying a renewal before it gives up leading (0: 15s and 10s).
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	// Workers is the number of parallel reconciles (default 10; Argo CD's
	// controller.status.processors).
	Workers int
	// OperationProcessors bounds how many sync operations run at once
	// (Argo CD's controller.operation.processors); an operation beyond it
	// waits for one to end. 0: no bound, since a sync mostly waits on
	// the cluster rather than using the controller.
	OperationProcessors int
	// InstallationID overrides argocd-cm's installationID: objects of
	// another installation sharing the cluster are never touched.
	InstallationID string
	// Metrics receives reconcile, sync, app and Git fetch metrics; nil
	// records none.
	Metrics *metrics.Metrics
	// QPS and Burst limit the controller's requests to the API server
	// (defaults 100 and 200; a config that sets its own keeps it).
	QPS   float32
	Burst int
	// PprofAddr serves Go's profiling endpoints there when set (off by
	// default; for benchmarks and debugging).
	PprofAddr string
	// TuneProcess sets the collector's percent for a controller (gcpercent.go)
	// and lets it release its executable's idle pages (filepages_linux.go),
	// which are the process's: for a process that runs one controller
	// (wavecd controller), not for tests that run many.
	TuneProcess bool
	// Now is the controller's clock for sync windows, conditions and
	// operation times (default time.Now). Tests move it to cross a sync
	// window's edge without waiting for the minute cron schedules count in;
	// timers still run on real time, so a clock that runs at real speed
	// with an offset keeps every wait right.
	Now func() time.Time
	// StallTimeout is how long a sync's wave may make no progress before
	// it is examined as a stall; it wins over argocd-cm's
	// wavecd.stall.timeout (default 2m).
	StallTimeout time.Duration
	// PluginsDir holds Config Management Plugin files and the sockets of
	// plugin sidecars (see internal/plugin); empty means no plugins.
	PluginsDir string
	// Sharding spreads the apps over every replica running with it (see
	// internal/shard): each replica reconciles its share, and leader
	// election, when on, picks the one that also runs the ApplicationSet
	// and notifications controllers.
	Sharding bool
	// ReplicaID names this replica among the shards (default: the host
	// name); unique per replica.
	ReplicaID string
	// ShardReplicas is how many replicas are meant to run: a starting
	// replica waits for them (at most a Lease duration) before it takes
	// up apps (0: no wait).
	ShardReplicas int
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "argocd"
	}
	if o.Workers == 0 {
		o.Workers = 10
	}
	if o.CacheDir == "" {
		o.CacheDir = compare.DefaultCacheDir()
	}
	if o.ReplicaID == "" {
		o.ReplicaID, _ = os.Hostname()
	}
}

// LeaderElectionID names the Lease replicas compete for, in the
// controller's namespace.
const LeaderElectionID = "wavecd-application-controller"

// Controller reconciles Applications. It is a manager.Runnable host: Start
// blocks until ctx ends.
type Controller struct {
	mgr manager.Manager
	rec *Reconciler
	// broadcaster sends the Events the reconciler records to events.
	broadcaster record.EventBroadcaster
	events      typedcorev1.EventInterface
}

// New builds a controller for the cluster cfg points at.
func New(cfg *rest.Config, opts Options) (*Controller, error) {
	opts.defaults()
	cfg = rest.CopyConfig(cfg)
	if opts.QPS != 0 {
		cfg.QPS, cfg.Burst = opts.QPS, max(opts.Burst, int(opts.QPS))
	}
	kube.DefaultRateLimit(cfg)
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	byObject, err := cachedObjects(opts)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.Namespace,
		// A replica that stops hands the lease over at once instead of
		// letting it expire.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 nonZero(opts.LeaseDuration),
		RenewDeadline:                 nonZero(opts.RenewDeadline),
		// managedFields are a third of a cached Application and nothing
		// the controller reads from its cache needs them (a comparison
		// that ignores fields by manager lists from the API server).
		Cache: cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()},
		// Every cached Get and List asks whether its kind is namespaced.
		MapperProvider: kube.RememberingMapperProvider,
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Application{}, indexDependsOn, dependsOnIndex); err != nil {
		return nil, fmt.Errorf("index applications: %w", err)
	}
	targets, err := destination.NewTargets(cfg, cluster.Registry{Reader: mgr.GetClient(), Namespace: opts.Namespace})
	if err != nil {
		return nil, err
	}
	rec := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), targets, opts)
	c := &Controller{mgr: mgr, rec: rec}
	if err := c.setupEvents(cfg, scheme); err != nil {
		return nil, err
	}
	if err := rec.setup(mgr); err != nil {
		return nil, err
	}
	if opts.Sharding {
		if err := rec.setupShards(mgr); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// cachedObjects are the kinds the manager's cache holds, and which of
// them: those of the controller's namespace, cluster Secrets only, and
// the replicas' Leases when sharding.
func cachedObjects(opts Options) (map[client.Object]cache.ByObject, error) {
	byObject := map[client.Object]cache.ByObject{
		&v1alpha1.Application{}: {Namespaces: appNamespaces(opts)},
		&v1alpha1.AppProject{}:  {Namespaces: map[string]cache.Config{opts.Namespace: {}}},
		&corev1.ConfigMap{}:     {Namespaces: map[string]cache.Config{opts.Namespace: {}}},
		// Cluster Secrets only: the registry of destination clusters.
		&corev1.Secret{}: {Namespaces: map[string]cache.Config{opts.Namespace: {}},
			Label: labels.SelectorFromSet(labels.Set{cluster.LabelSecretType: cluster.SecretTypeCluster})},
	}
	if opts.Sharding {
		hasReplica, err := labels.Parse(shard.LabelReplica)
		if err != nil {
			return nil, fmt.Errorf("replica label: %w", err)
		}
		byObject[&coordinationv1.Lease{}] = cache.ByObject{Namespaces: map[string]cache.Config{opts.Namespace: {}}, Label: hasReplica}
	}
	return byObject, nil
}

// appNamespaces are the namespaces whose Applications the cache holds:
// those named, or every one when a pattern is a glob (the reconciler
// skips the apps of the namespaces it does not match).
func appNamespaces(opts Options) map[string]cache.Config {
	names := opts.namespaces().Watch()
	if names == nil {
		return map[string]cache.Config{cache.AllNamespaces: {}}
	}
	out := map[string]cache.Config{}
	for _, ns := range names {
		out[ns] = cache.Config{}
	}
	return out
}

// namespaces is where the controller's Applications live.
func (o Options) namespaces() application.Namespaces {
	return application.Namespaces{Control: o.Namespace, Patterns: o.ApplicationNamespaces}
}

// setupEvents gives the reconciler its event recorder, and the controller
// the broadcaster and client that Start connects. Events are core Events
// through client-go's correlator, as Argo CD records them (the newer
// events API merges events that differ only in their note), and go as
// protobuf: a bootstrap sends hundreds, and JSON costs several times the
// CPU.
func (c *Controller) setupEvents(cfg *rest.Config, scheme *runtime.Scheme) error {
	eventsCfg := rest.CopyConfig(cfg)
	eventsCfg.ContentType = runtime.ContentTypeProtobuf
	eventsCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	core, err := typedcorev1.NewForConfig(eventsCfg)
	if err != nil {
		return fmt.Errorf("events client: %w", err)
	}
	c.events = core.Events("")
	c.broadcaster = record.NewBroadcaster()
	host, _ := os.Hostname()
	c.rec.recorder = c.broadcaster.NewRecorder(scheme, corev1.EventSource{Component: EventComponent, Host: host})
	return nil
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.broadcaster.StartRecordingToSink(newPacedSink(ctx, &typedcorev1.EventSinkImpl{Interface: c.events}, c.rec.syncing))
	defer c.broadcaster.Shutdown()
	c.rec.life.set(ctx)
	c.rec.targets.Start(ctx, c.rec.router.onNewInformer)
	go newMemoryTrimmer(&c.rec.activity, c.rec.syncing, trimOptions{Files: c.rec.opts.TuneProcess}).run(ctx)
	if c.rec.opts.TuneProcess {
		go holdGCPercent(ctx)
	}
	if err := c.rec.comparer.LoadMirrors(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	return c.mgr.Start(ctx)
}

func (r *Reconciler) setup(mgr manager.Manager) error {
	c, err := controller.New("application", mgr, controller.Options{
		Reconciler:              r,
		MaxConcurrentReconciles: r.opts.Workers,
		SkipNameValidation:      ptrTrue(),
		// Sharded, every replica reconciles its own apps.
		NeedLeaderElection: ptrBool(!r.opts.Sharding),
	})
	if err != nil {
		return fmt.Errorf("create application controller: %w", err)
	}
	r.router.ctrl = c
	apps := ctrlsource.Kind(mgr.GetCache(), client.Object(&v1alpha1.Application{}), r.router.appHandler())
	if err := c.Watch(apps); err != nil {
		return fmt.Errorf("watch applications: %w", err)
	}
	if err := c.Watch(ctrlsource.Channel(r.events, &handler.EnqueueRequestForObject{})); err != nil {
		return fmt.Errorf("watch refresh requests: %w", err)
	}
	settings := ctrlsource.Kind(mgr.GetCache(), client.Object(&corev1.ConfigMap{}), handler.EnqueueRequestsFromMapFunc(r.router.settingsEvents))
	if err := c.Watch(settings); err != nil {
		return fmt.Errorf("watch settings: %w", err)
	}
	projects := ctrlsource.Kind(mgr.GetCache(), client.Object(&v1alpha1.AppProject{}), handler.EnqueueRequestsFromMapFunc(r.router.projectEvents))
	if err := c.Watch(projects); err != nil {
		return fmt.Errorf("watch projects: %w", err)
	}
	clusters := ctrlsource.Kind(mgr.GetCache(), client.Object(&corev1.Secret{}), handler.EnqueueRequestsFromMapFunc(r.router.clusterEvents))
	if err := c.Watch(clusters); err != nil {
		return fmt.Errorf("watch cluster secrets: %w", err)
	}
	// clusterEvents prunes the targets on every change of the Secrets.
	r.targets.FollowClusters()
	return nil
}

func ptrTrue() *bool { return ptrBool(true) }

func ptrBool(b bool) *bool { return &b }

// nonZero points at d, or is nil for 0 (the manager's default).
func nonZero(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}

// requeueSoon is how long a reconcile waits before looking again at
// something that is still changing.
const requeueSoon = 2 * time.Second

var _ reconcile.Reconciler = (*Reconciler)(nil)
