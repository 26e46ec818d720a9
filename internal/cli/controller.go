package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/appset"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/kube"
	wmetrics "github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/notify"
	"github.com/wavecd/wavecd/internal/server"
)

// controllerAction runs the controller and its HTTP server.
type controllerAction struct {
	errOut  io.Writer
	kube    kubeFlags
	opts    controller.Options
	mirrors []string
	listen  string
	verbose bool
	// notifications runs the notifications controller beside it.
	notifications bool
	// scmProviders and allowedSCM are the ApplicationSet controller's
	// SCMPolicy.
	scmProviders bool
	allowedSCM   []string
}

func newControllerCommand(s Streams) *cobra.Command {
	a := &controllerAction{errOut: s.Err}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Application controller against a cluster",
		Long: `Reconcile the Applications in --namespace (and in those
--application-namespaces match, when their project's sourceNamespaces permit
it, as Argo CD's apps in any namespace): render their sources, compare
them with the cluster, write Argo CD's status, and run manual and automated
syncs with health-gated waves. Settings come from the argocd-cm ConfigMap in
the same namespace. The ApplicationSets of --namespace generate their
Applications in the same process (leader only), and the notifications
controller sends what argocd-notifications-cm and the apps' subscription
annotations ask for (leader only; --notifications=false turns it off).
Runs until interrupted.

With --sharding, every replica reconciles a share of the apps: consistent
hashing with bounded loads (no replica above 1.25 times the mean), one
Lease per replica for membership, and Argo CD's explicit assignment (the
wavecd.io/shard annotation, else the destination cluster Secret's shard
key, a replica's index among the live replicas sorted by name). A dead
replica's apps move within the Lease duration; an app moves only once its
old replica has stopped its work.

It also serves, on --listen (every replica, leader or not):
  POST /api/webhook  GitHub push events refresh the apps of the pushed
                     repository and revision (webhook.github.secret in
                     Secret argocd-secret, when set, must sign them)
  /metrics           Prometheus metrics (wavecd_app_*, wavecd_git_*,
                     wavecd_notifications_*)
  /healthz, /readyz  liveness, and readiness once the caches are synced`,
		Example: `  wavecd controller --namespace argocd
  wavecd controller --kubeconfig .wavecd/kubeconfig --mirror https://github.com/org/repo.git=./repo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.Run(cmd.Context()) },
	}
	a.addFlags(cmd.Flags())
	return cmd
}

// addFlags adds the controller's flags to f.
func (a *controllerAction) addFlags(f *pflag.FlagSet) {
	a.kube.addTo(f)
	f.StringVarP(&a.opts.Namespace, "namespace", "n", "argocd", "namespace of the Applications, AppProjects and argocd-cm")
	addAppNamespacesFlag(f, &a.opts.ApplicationNamespaces, "reconciled")
	f.StringVar(&a.listen, "listen", server.DefaultAddr, "address of the webhook, metrics and health endpoints")
	f.BoolVar(&a.opts.ArgoParity, "argo-parity", false, "behave like Argo CD: no child Application health, no generic condition check")
	f.BoolVar(&a.opts.Hydrator, "hydrator-enabled", os.Getenv("ARGOCD_HYDRATOR_ENABLED") == "true",
		"hydrate apps with a spec.sourceHydrator: render the dry source and commit it to the hydrated branch (Argo CD's hydrator.enabled; default: $ARGOCD_HYDRATOR_ENABLED)")
	f.BoolVar(&a.scmProviders, "enable-scm-providers", true,
		"let the ApplicationSet SCM provider and pull request generators call Git hosting services (Argo CD's flag)")
	f.StringSliceVar(&a.allowedSCM, "allowed-scm-providers", nil,
		"the only api URLs SCM provider and pull request generators may name, comma-separated (default: any; github.com is always allowed)")
	f.StringArrayVar(&a.mirrors, "mirror", nil, mirrorUsage)
	f.StringVar(&a.opts.PluginsDir, "plugins-dir", "", pluginsDirUsage)
	f.StringVar(&a.opts.HealthLibraryDir, "health-library", "", "directory of Lua health checks in Argo CD's resource_customizations layout")
	f.StringVar(&a.opts.CacheDir, "cache-dir", "", "directory for Git clones (default: the user cache directory)")
	f.BoolVar(&a.opts.LeaderElection, "leader-elect", true, "elect one active controller among replicas")
	f.DurationVar(&a.opts.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long a standby waits before taking over a lease its holder stopped renewing")
	f.DurationVar(&a.opts.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader retries renewing its lease before it stops leading (less than the lease duration)")
	f.IntVar(&a.opts.Workers, "workers", 10, "parallel reconciles (Argo CD's controller.status.processors)")
	f.IntVar(&a.opts.OperationProcessors, "operation-processors", 0,
		"sync operations run at once, others wait their turn (Argo CD's controller.operation.processors); 0: no bound")
	f.DurationVar(&a.opts.StallTimeout, "stall-timeout", 0,
		"how long a wave may make no progress, with unschedulable pods, before it is reported stalled (default: argocd-cm's wavecd.stall.timeout, else 2m)")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "log every sync step")
	f.BoolVar(&a.notifications, "notifications", true, "send the notifications of argocd-notifications-cm (Argo CD's notifications controller)")
	f.Float32Var(&a.opts.QPS, "kube-api-qps", kube.NoRateLimit,
		"requests per second to the API server; -1: no client-side limit, the API server's priority and fairness paces requests")
	f.IntVar(&a.opts.Burst, "kube-api-burst", 0, "request burst to the API server, with --kube-api-qps (default: the QPS)")
	f.BoolVar(&a.opts.Sharding, "sharding", false,
		"spread the apps over every replica started with --sharding (one Lease each); the leader alone runs ApplicationSets and notifications")
	f.IntVar(&a.opts.ShardReplicas, "shard-replicas", 0,
		"with --sharding, how many replicas are meant to run: a starting replica waits for them, at most a lease duration, before it takes up apps")
	f.StringVar(&a.opts.ReplicaID, "replica-id", "", "this replica's name among the shards, unique per replica (default: the host name)")
	f.StringVar(&a.opts.PprofAddr, "pprof-listen", "", "serve Go profiling endpoints on this address (off when empty)")
}

// Run builds the controller and its server, and runs both until ctx ends.
func (a *controllerAction) Run(ctx context.Context) error {
	setLoggers(a.errOut, logLevel(a.verbose))
	mirrors, err := parseMirrorFlags(a.mirrors)
	if err != nil {
		return err
	}
	a.opts.Mirrors = mirrors
	cfg, err := a.kube.restConfig()
	if err != nil {
		return err
	}
	metrics, err := wmetrics.New(nil)
	if err != nil {
		return err
	}
	a.opts.Metrics = metrics
	a.opts.TuneProcess = true // this process runs the controller
	a.opts.ArgoCDCRD = argoCDCRD(ctx, cfg)
	kube.CountRequests(cfg, metrics.ObserveKubeRequest)
	ctrl, err := controller.New(cfg, a.opts)
	if err != nil {
		return err
	}
	// The ApplicationSet controller runs beside it, on the leader only.
	setOpts := appset.Options{Namespace: a.opts.Namespace, Mirrors: mirrors, Apps: ctrl.AppCache(),
		SCM: appset.SCMPolicy{Disabled: !a.scmProviders, Allowed: a.allowedSCM}}
	if a.opts.CacheDir != "" {
		setOpts.CacheDir = filepath.Join(a.opts.CacheDir, "applicationsets")
	}
	appsets, err := appset.New(cfg, setOpts)
	if err != nil {
		return err
	}
	if err := ctrl.Add(appsets); err != nil {
		return err
	}
	if a.notifications {
		n, err := notify.New(cfg, notify.Options{Namespace: a.opts.Namespace, Metrics: metrics, Apps: ctrl.AppCache(), AppNamespaces: ctrl.AppNamespaces})
		if err != nil {
			return err
		}
		if err := ctrl.Add(n); err != nil {
			return err
		}
	}
	maxBody, err := server.MaxWebhookBytes(ctx, ctrl.APIReader(), a.opts.Namespace)
	if err != nil {
		return err
	}
	webhook := server.NewWebhook(server.WebhookOptions{
		Apps: ctrl.Lister(), Refresher: ctrl.Refresher(),
		Secrets:      server.SettingsSecret{Reader: ctrl.APIReader(), Namespace: a.opts.Namespace},
		MaxBodyBytes: maxBody,
	})
	srv := server.New(server.Options{Addr: a.listen, Webhook: webhook, Metrics: metrics, Ready: ctrl.Ready})
	if err := ctrl.Add(srv); err != nil {
		return err
	}
	slog.Info("controller starting", "namespace", a.opts.Namespace, "listen", a.listen, "sharding", a.opts.Sharding)
	return ctrl.Start(ctx)
}

// argoCDCRD reads whether the cluster's Application CRD is Argo CD's,
// which drops what wavecd writes besides Argo CD's fields; it says so once
// in the log. A CRD it cannot read counts as wavecd's.
func argoCDCRD(ctx context.Context, cfg *rest.Config) bool {
	c, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return false
	}
	keeps, err := install.KeepsSyncState(ctx, c)
	if err != nil {
		slog.DebugContext(ctx, "could not read the Application CRD's schema", "err", err)
		return false
	}
	if !keeps {
		slog.WarnContext(ctx, "the Application CRD is Argo CD's: it keeps no running sync's state and no per-resource sync times, "+
			"so a sync that a restarted controller finds running starts again, and the UI's sync timeline has no per-resource times "+
			"(wavecd's own CRDs keep both: docs/install.md)")
	}
	return !keeps
}
