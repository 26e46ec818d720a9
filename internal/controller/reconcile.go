package controller

import (
	"context"
	"fmt"
	"log/slog"
	stdsync "sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/appstatus"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/hydrate"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/operation"
	"github.com/wavecd/wavecd/internal/project"
	"github.com/wavecd/wavecd/internal/provisioner"
	"github.com/wavecd/wavecd/internal/shard"
)

// AnnotationRefresh asks for a refresh: "normal" or "hard"
// (application.RefreshAnnotation).
const AnnotationRefresh = application.RefreshAnnotation

// Reconciler reconciles one Application per call.
type Reconciler struct {
	client    client.Client
	apiReader client.Reader
	// targets are the destination clusters, the local one first.
	targets *destination.Targets
	// comparer renders apps and compares them with their destinations.
	comparer *compare.Comparer
	// hydration hydrates the apps with a source hydrator.
	hydration *hydration
	// provisioners finds the apps that deploy node provisioners, for the
	// explanation of a stalled sync.
	provisioners provisioner.Finder
	// status reads and writes the apps: one pending patch per reconcile.
	status *appstatus.Writer
	opts   Options
	// ns says which namespaces' apps are reconciled, and names them: the
	// controller's state of an app is keyed by its instance name (key).
	ns        application.Namespaces
	refreshes *refreshSet
	// parentPace spaces out the refreshes of apps of apps.
	parentPace *parentPace
	// router turns watch events into the apps to reconcile.
	router *router
	// runs keeps the sync operation running for each app; runner runs
	// them.
	runs      *operation.Registry
	runner    *operation.Runner
	finalizer *finalizer
	starter   *starter
	compared  comparedTimes
	activity  activity
	settings  settingsCache
	now       func() time.Time
	// metrics records reconciles, syncs, app state and Git fetches (nil: none).
	metrics *metrics.Metrics
	events  chan event.GenericEvent
	// recorder records Kubernetes Events on Applications; nil records none.
	recorder record.EventRecorder
	// shards says which apps this replica reconciles; nil: all of them.
	shards *shard.Coordinator
	// life is the controller's lifetime context.
	life *lifetime
}

// newReconciler builds a Reconciler; c is the manager's cached client,
// reader reads from the API server.
func newReconciler(c client.Client, reader client.Reader, targets *destination.Targets, opts Options) *Reconciler {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	r := &Reconciler{
		client: c, apiReader: reader, targets: targets,
		opts:       opts,
		ns:         opts.namespaces(),
		metrics:    opts.Metrics,
		refreshes:  &refreshSet{marks: map[string]refreshKind{}},
		parentPace: newParentPace(),
		runs:       operation.NewRegistry(opts.OperationProcessors),
		life:       &lifetime{},
		events:     make(chan event.GenericEvent, 256),
		now:        now,
	}
	r.comparer = compare.New(compare.Options{
		Namespace: opts.Namespace, CacheDir: opts.CacheDir, Mirrors: opts.Mirrors, PluginsDir: opts.PluginsDir,
		Reader: reader, Apps: c, Now: now, GitFetched: r.metrics.ObserveGitFetch,
	})
	r.hydration = newHydration(opts.Hydrator, r.comparer, c, reader, opts.Namespace, func(namespace, name string) {
		r.refreshes.mark(r.ns.InstanceName(namespace, name), askedRefresh)
		r.enqueue(namespace, name)
	}, now)
	r.status = appstatus.NewWriter(c, reader, r.recordChanges)
	r.router = &router{
		client: c, ns: r.ns, refreshes: r.refreshes, parentPace: r.parentPace, gates: &gateIndex{},
		targets: targets, installationID: r.installationID,
	}
	r.provisioners = provisioner.Finder{Apps: c, Namespace: opts.Namespace, Parent: r.router.trackingOwner, Render: r.renderLocal}
	r.finalizer = &finalizer{comparer: r.comparer, targets: targets, runs: r.runs, argoParity: opts.ArgoParity, now: now, key: r.key}
	r.runner = &operation.Runner{
		Registry: r.runs, Targets: r.comparer, Manifests: compare.Manifests{Comparer: r.comparer}, Status: r.status, APIReader: reader, Namespace: opts.Namespace, Now: now,
		ArgoParity: opts.ArgoParity, ArgoCDCRD: opts.ArgoCDCRD, NodeProvisioners: r.provisioners.Find, Metrics: opts.Metrics,
	}
	r.starter = &starter{
		client: c, apiReader: reader, status: r.status, runs: r.runs, runner: r.runner, argoParity: opts.ArgoParity,
		now: now, life: r.life, enqueue: r.enqueue, key: r.key, host: func(req opRequest) operation.Host { return opHost{r: r, req: req} },
	}
	return r
}

// Reconcile brings one Application's status up to date and starts or
// resumes its sync operation.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !r.ns.Enabled(req.Namespace) {
		return reconcile.Result{}, nil // not an app of this installation
	}
	key := r.ns.InstanceName(req.Namespace, req.Name)
	if r.shards != nil {
		if !r.shards.Begin(key) {
			return reconcile.Result{}, nil // another replica's
		}
		defer r.shards.End(key)
	}
	log := slog.With("app", r.ns.QualifiedName(req.Namespace, req.Name))
	ctx = logctx.With(ctx, log)
	r.activity.add()
	start := time.Now()
	// Status patches are merge patches computed against this copy, which
	// must include the controller's own last write: a cached copy older
	// than that waits for the cache (the write's watch event enqueues the
	// app again), instead of reading the API server.
	app := &v1alpha1.Application{}
	current, err := r.status.ReadCurrent(ctx, req.NamespacedName, app)
	if err == nil && !current {
		return reconcile.Result{RequeueAfter: staleCopyRequeue}, nil
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.status.Forget(req.NamespacedName)
			r.compared.forget(key)
			r.comparer.Forget(req.NamespacedName)
			r.parentPace.forget(key)
			r.runs.Stop(key)
			r.metrics.DeleteApp(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("read application: %w", err)
	}
	res, err := r.reconcileApp(ctx, app)
	took := time.Since(start)
	r.parentPace.observe(key, took)
	r.metrics.ObserveReconcile(req.Namespace, req.Name, metrics.ResultOf(err), took)
	return res, err
}

// staleCopyRequeue is when a reconcile that found the cached app older
// than the controller's last write runs again, should the write's watch
// event not come first.
const staleCopyRequeue = 500 * time.Millisecond

// reconcileApp is Reconcile for an app that exists. Everything it decides
// (conditions, the comparison, an automated sync, the refresh request
// answered, finalizers removed) goes into one pending patch of the app,
// written once at the end, whatever path the decision took; then the sync
// runner it asked for starts, seeing the app as written. The app's metrics
// are recorded before: from then on the runner, and the request it writes,
// own app. read is the app as read (the cache's copy): the patch changes a
// copy of it.
func (r *Reconciler) reconcileApp(ctx context.Context, read *v1alpha1.Application) (reconcile.Result, error) {
	st := r.status.Begin(read)
	app := st.App()
	res, run, err := r.decide(ctx, st)
	if err == nil && run != nil && run.requested && st.StatusOnly() {
		// The sync's first write carries the request (deferRequest).
		r.setAppInfo(app)
		return res, r.starter.startRunner(ctx, *run, st)
	}
	werr := st.Flush(ctx)
	r.setAppInfo(app)
	if err == nil && werr != nil {
		return reconcile.Result{}, werr
	}
	if err != nil || run == nil {
		return res, err
	}
	return res, r.starter.startRunner(ctx, *run, nil)
}

// setAppInfo records app's project, health and sync status as metrics.
func (r *Reconciler) setAppInfo(app *v1alpha1.Application) {
	if app.DeletionTimestamp == nil {
		r.metrics.SetAppInfo(app)
	}
}

// decide is the reconcile's bookkeeping, in order: settings, deletion,
// project, destination, spec, refresh, then the operation. It changes the
// app in st and returns the sync to run, if any.
func (r *Reconciler) decide(ctx context.Context, st *appstatus.Patch) (reconcile.Result, *opRequest, error) {
	app := st.App()
	settings, err := r.settings.get(ctx, r.client, r.opts)
	if err != nil {
		setCondition(ctx, app, r.now(), v1alpha1.ApplicationConditionInvalidSpecError, err.Error())
		return reconcile.Result{}, nil, nil
	}
	if app.DeletionTimestamp != nil {
		res, err := r.finalizer.finalize(ctx, app, settings)
		return res, nil, err
	}
	proj, err := getProject(ctx, r.client, r.opts.Namespace, app.Spec.Project)
	if err != nil {
		setCondition(ctx, app, r.now(), v1alpha1.ApplicationConditionInvalidSpecError, err.Error())
		return reconcile.Result{}, nil, nil
	}
	if !r.ns.ProjectPermits(proj, app.Namespace) {
		// Argo CD's condition: nothing is compared or synced.
		setCondition(ctx, app, r.now(), v1alpha1.ApplicationConditionUnknownError, application.ProjectNotPermittedError(app, proj.Name).Error())
		return reconcile.Result{RequeueAfter: settings.ReconcileTimeout}, nil, nil
	}
	application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionUnknownError)
	dest, tgt, err := r.targets.Resolve(ctx, app)
	if destination.IsError(err) {
		// A cluster Secret that appears later reconciles the app at once.
		setCondition(ctx, app, r.now(), v1alpha1.ApplicationConditionInvalidSpecError, err.Error())
		return reconcile.Result{RequeueAfter: settings.ReconcileTimeout}, nil, nil
	}
	if err != nil {
		return reconcile.Result{}, nil, err
	}
	problems := project.Check(proj, app, dest)
	if h := app.Spec.SourceHydrator; h != nil {
		problems = append(problems, hydrate.Check(h)...)
	}
	if len(problems) > 0 {
		setCondition(ctx, app, r.now(), v1alpha1.ApplicationConditionInvalidSpecError, joinLines(problems))
		return reconcile.Result{RequeueAfter: settings.ReconcileTimeout}, nil, nil
	}
	application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionInvalidSpecError)
	req := opRequest{app: app, proj: proj, dest: dest, target: tgt, settings: settings}
	hydrated, retry := r.hydration.run(ctx, req, r.refreshes.peek(r.key(app)))
	if hydrated {
		r.refreshes.mark(r.key(app), askedRefresh) // the sync source moved: read it now
	}
	pause, err := r.refreshIfDue(ctx, st, &req)
	if err != nil {
		return reconcile.Result{}, nil, err
	}
	requested := app.Operation == nil
	wait, run := r.starter.handleOperation(ctx, req)
	req.requested = requested && app.Operation != nil
	next := r.nextRefresh(app, settings)
	for _, d := range []time.Duration{wait, pause, retry} {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	if !run {
		return reconcile.Result{RequeueAfter: next}, nil, nil
	}
	return reconcile.Result{RequeueAfter: next}, &req, nil
}

// syncRefreshInterval is how often an app whose sync is running is
// compared again on events: its objects change by the dozen while it
// runs, and its end compares it at once.
const syncRefreshInterval = 5 * time.Second

// syncRefreshShare is the most of its time a syncing app of many objects
// spends being compared on events: an app of at least
// syncRefreshManyObjects objects (the root of thousands of children,
// whose children's events come by the thousand) whose comparison takes
// longer than a tenth of syncRefreshInterval is compared at most every
// ten times its last comparison's duration.
const (
	syncRefreshShare       = 10
	syncRefreshManyObjects = 1000
)

// syncRefreshEvery is how often app, syncing, is compared on events.
func (r *Reconciler) syncRefreshEvery(app *v1alpha1.Application) time.Duration {
	if len(app.Status.Resources) < syncRefreshManyObjects {
		return syncRefreshInterval
	}
	return max(syncRefreshInterval, syncRefreshShare*r.compared.tookLast(r.key(app)))
}

// refreshIfDue refreshes req.app when that is due, into st. An implicit
// refresh of an app whose sync is running waits until
// syncRefreshInterval has passed since the sync started and since the last
// refresh; the returned duration is that wait. A refresh nobody asked for
// (periodic, or an event) that is not this controller's first of the app
// makes st quiet: one that changed nothing but the timestamps is not
// written while status.reconciledAt is under reconciledAtMaxAge old.
func (r *Reconciler) refreshIfDue(ctx context.Context, st *appstatus.Patch, req *opRequest) (time.Duration, error) {
	app := req.app
	kind := r.needsRefresh(app, req.settings)
	if kind == noRefresh {
		return 0, nil
	}
	key := r.key(app)
	last, before := r.compared.get(key)
	if started, running := r.runs.Since(key); running && before && kind == normalRefresh {
		if pause := r.syncRefreshEvery(app) - r.now().Sub(latest(last, started)); pause > 0 {
			r.refreshes.mark(key, normalRefresh)
			return pause, nil
		}
	}
	if _, asked := app.Annotations[AnnotationRefresh]; before && !asked {
		st.Quiet(reconciledAtMaxAge, r.now)
	}
	return 0, r.refresh(ctx, req.target, app, req.proj, req.settings, kind)
}

// refreshKind is whether and how an app is compared again.
type refreshKind int

const (
	noRefresh refreshKind = iota
	// normalRefresh is a refresh nobody asked for (periodic, or an event
	// of the app's objects): it may resolve revisions with refs listed
	// moments before (revisionMaxAge).
	normalRefresh
	// askedRefresh is one someone asked for (the refresh annotation, the
	// API, a webhook): revisions are resolved now.
	askedRefresh
	// hardRefresh renders again instead of reading the render cache.
	hardRefresh
)

// needsRefresh decides whether to render and compare again.
func (r *Reconciler) needsRefresh(app *v1alpha1.Application, s *Settings) refreshKind {
	kind := r.refreshes.take(r.key(app))
	if app.Annotations[AnnotationRefresh] == "hard" {
		return hardRefresh
	}
	if _, ok := app.Annotations[AnnotationRefresh]; ok {
		kind = max(kind, askedRefresh)
	}
	if kind != noRefresh {
		return kind
	}
	st := app.Status
	last, ok := r.lastCompared(app)
	if !ok || st.Sync.Status == "" || !sameSpec(st.Sync.ComparedTo, app) {
		return normalRefresh
	}
	if s.ReconcileTimeout > 0 && r.now().Sub(last) >= s.ReconcileTimeout {
		return normalRefresh
	}
	if retry, failed := r.comparisonRetry(app, s); failed && r.now().Sub(last) >= retry {
		return normalRefresh
	}
	return noRefresh
}

// comparisonRetryMin is the first wait before a failed comparison is
// tried again.
const comparisonRetryMin = 5 * time.Second

// comparisonRetry is how long after a failed comparison (ComparisonError:
// Git unreachable, a render error) the app is compared again: half as long
// as the error has lasted, at least comparisonRetryMin and at most the
// reconciliation timeout. A short outage ends within seconds of its repair
// instead of at the next periodic refresh, and a lasting error is retried
// less and less often.
func (r *Reconciler) comparisonRetry(app *v1alpha1.Application, s *Settings) (time.Duration, bool) {
	for _, c := range app.Status.Conditions {
		if c.Type != v1alpha1.ApplicationConditionComparisonError || c.LastTransitionTime == nil {
			continue
		}
		retry := max(r.now().Sub(c.LastTransitionTime.Time)/2, comparisonRetryMin)
		if s.ReconcileTimeout > 0 {
			retry = min(retry, s.ReconcileTimeout)
		}
		return retry, true
	}
	return 0, false
}

// setCondition records a condition of the given type in the app's
// status, replacing any of that type. The reconcile then ends without an
// error, so it is not retried hot: the condition says what is wrong.
func setCondition(ctx context.Context, app *v1alpha1.Application, now time.Time, typ, message string) {
	if conditionMessage(app, typ) == message && hasCondition(app, typ) {
		return
	}
	application.SetCondition(&app.Status, typ, message, now)
	logctx.From(ctx).Info("condition", "type", typ, "message", message)
}

// key is app's key in the controller's state: its instance name, which
// its objects' tracking gives (router.trackingOwner).
func (r *Reconciler) key(app *v1alpha1.Application) string {
	return r.ns.InstanceName(app.Namespace, app.Name)
}

func (r *Reconciler) enqueue(namespace, name string) {
	app := &v1alpha1.Application{}
	app.Namespace, app.Name = namespace, name
	done := r.life.context().Done()
	go func() {
		select {
		case r.events <- event.GenericEvent{Object: app}:
		case <-done:
		}
	}()
}

// indexDependsOn indexes cached Applications by the apps they depend on.
const indexDependsOn = "wavecd.io/depends-on"

func dependsOnIndex(obj client.Object) []string {
	app, ok := obj.(*v1alpha1.Application)
	if !ok {
		return nil
	}
	return application.DependsOn(app)
}

// refreshSet remembers apps that must refresh on their next reconcile,
// and how.
type refreshSet struct {
	mu    stdsync.Mutex
	marks map[string]refreshKind
}

// mark asks for a refresh of app name of at least kind.
func (s *refreshSet) mark(name string, kind refreshKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks[name] = max(s.marks[name], kind)
}

// peek returns the refresh name is marked for, and keeps it.
func (s *refreshSet) peek(name string) refreshKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.marks[name]
}

// take returns the refresh name was marked for (noRefresh when none) and
// forgets it.
func (s *refreshSet) take(name string) refreshKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	kind := s.marks[name]
	delete(s.marks, name)
	return kind
}

// settingsCache parses argocd-cm again only when it changed.
type settingsCache struct {
	mu       stdsync.Mutex
	version  string
	settings *Settings
}

func (c *settingsCache) get(ctx context.Context, cl client.Client, opts Options) (*Settings, error) {
	// The cache's own copy: only its version is read, and its data when
	// parsed, which Settings keeps and never changes.
	cm := &corev1.ConfigMap{}
	err := cl.Get(ctx, types.NamespacedName{Namespace: opts.Namespace, Name: SettingsConfigMap}, cm, client.UnsafeDisableDeepCopy)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read %s: %w", SettingsConfigMap, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settings != nil && c.version == cm.ResourceVersion {
		return c.settings, nil
	}
	s, err := parseSettings(cm.Data, opts)
	if err != nil {
		return nil, err
	}
	c.version, c.settings = cm.ResourceVersion, s
	return s, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// syncing reports whether a sync runs: the controller is busy, and the API
// server's time goes to the syncs (the memory trimmer and the pace of
// Events ask).
func (r *Reconciler) syncing() bool { return r.runs.Count() > 0 }

// installationID is the installation ID in force (argocd-cm's, or the
// option's when set).
func (r *Reconciler) installationID() string {
	if r.opts.InstallationID != "" {
		return r.opts.InstallationID
	}
	r.settings.mu.Lock()
	defer r.settings.mu.Unlock()
	if r.settings.settings != nil {
		return r.settings.settings.InstallationID
	}
	return ""
}
