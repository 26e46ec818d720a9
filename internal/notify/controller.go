package notify

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlsource "sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

// EventComponent is the reporting controller of the Events this
// controller records.
const EventComponent = "wavecd-notifications-controller"

// TLSCertsConfigMap holds certificates of servers, by server name, that
// services trust (Argo CD's argocd-tls-certs-cm).
const TLSCertsConfigMap = "argocd-tls-certs-cm"

// DefaultResync is how often every app is looked at again without a
// change, so time-based conditions fire (Argo CD's resync period).
const DefaultResync = time.Minute

// Options configure a Controller.
type Options struct {
	// Namespace holds the Applications, AppProjects and the settings
	// (default argocd).
	Namespace string
	// Metrics counts deliveries and trigger evaluations (optional).
	Metrics Metrics
	// Resync is how often an unchanged app is evaluated again (default
	// DefaultResync).
	Resync time.Duration
	// Workers is the number of apps evaluated in parallel (default 4).
	Workers int
	// Apps, when set, is a cache of the namespace's Applications that
	// another controller of the process keeps (the Application
	// controller's): the controller reads and watches the apps there
	// instead of keeping a copy of each of its own.
	Apps cache.Cache
	// AppNamespaces, with Apps, says which namespaces' apps in it are
	// notified about (apps in any namespace), with the settings and
	// projects of Namespace; nil: Namespace's alone.
	AppNamespaces func(namespace string) bool
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "argocd"
	}
	if o.AppNamespaces == nil {
		ns := o.Namespace
		o.AppNamespaces = func(n string) bool { return n == ns }
	}
	if o.Resync == 0 {
		o.Resync = DefaultResync
	}
	if o.Workers == 0 {
		o.Workers = 4
	}
}

var projectGVK = schema.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: "AppProject"}

// Controller sends the notifications Applications are subscribed to. It
// is a manager.Runnable: Start blocks until ctx ends. Added to a manager
// with leader election, it runs on the leader only; it keeps its own
// cache of the namespace's AppProjects and of the notification settings,
// and of its Applications unless Options.Apps shares one.
type Controller struct {
	cache  cache.Cache
	ctrl   controller.Controller
	rec    *reconciler
	events typedcorev1.EventInterface
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
	c, cl, err := kube.NamespaceCache(cfg, scheme, opts.Namespace, map[client.Object]cache.ByObject{
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{opts.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", SecretName),
		},
	})
	if err != nil {
		return nil, err
	}
	core, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	apps := opts.Apps
	if apps == nil {
		apps = c
	}
	rec := &reconciler{
		client: cl, appReader: apps, opts: opts, scheme: scheme, now: time.Now,
		states: map[types.NamespacedName]*appState{}, threads: newSlackThreads(),
	}
	ctrl, err := controller.NewUnmanaged("notifications", controller.Options{
		Reconciler: rec, MaxConcurrentReconciles: opts.Workers, SkipNameValidation: ptrTrue(),
	})
	if err != nil {
		return nil, fmt.Errorf("create notifications controller: %w", err)
	}
	if err := ctrl.Watch(ctrlsource.Kind(apps, client.Object(&v1alpha1.Application{}), handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { rec.appChanged(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { rec.appChanged(ctx, e.ObjectNew, q) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { rec.appChanged(ctx, e.Object, q) },
	})); err != nil {
		return nil, fmt.Errorf("watch applications: %w", err)
	}
	// Unconfigured, apps are not looked at again; the settings appearing
	// or changing look at every app.
	if err := ctrl.Watch(ctrlsource.Kind(c, client.Object(&corev1.ConfigMap{}), handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { rec.settingsChanged(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { rec.settingsChanged(ctx, e.ObjectNew, q) },
	})); err != nil {
		return nil, fmt.Errorf("watch %s: %w", ConfigMapName, err)
	}
	return &Controller{cache: c, ctrl: ctrl, rec: rec, events: core.Events("")}, nil
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func ptrTrue() *bool { b := true; return &b }

// Start runs the controller until ctx ends, then waits for the
// deliveries in flight to stop.
func (c *Controller) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	broadcaster := record.NewBroadcaster()
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.events})
	host, _ := os.Hostname()
	c.rec.sender = newSender(c.rec.opts.Metrics, broadcaster.NewRecorder(c.rec.scheme, corev1.EventSource{Component: EventComponent, Host: host}))
	defer c.rec.sender.wait()
	if err := kube.RunWithCache(ctx, c.cache, c.ctrl.Start); err != nil {
		return fmt.Errorf("notifications controller: %w", err)
	}
	return nil
}

// appState is what the controller remembers of an app between looks: its
// notified state, the true one even when writing it back failed, and the
// annotation value last written.
type appState struct {
	uid     types.UID
	state   State
	written string
}

// reconciler evaluates one app per reconcile.
type reconciler struct {
	client client.Client
	// appReader reads the Applications: the shared cache or the client's.
	appReader client.Reader
	opts      Options
	scheme    *runtime.Scheme
	sender    *sender
	now       func() time.Time
	threads   *slackThreads

	mu     sync.Mutex
	states map[types.NamespacedName]*appState
	config *loadedConfig
	// configured is set while argocd-notifications-cm exists.
	configured atomic.Bool
}
