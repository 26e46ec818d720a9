package rehearsal

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/rehearsal/localcluster"
	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/rehearsal/snapshot"
	"github.com/wavecd/wavecd/internal/rehearsal/timeline"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

// Namespace is where a rehearsal's Applications, AppProjects and settings
// live, and the namespace its controller watches.
const Namespace = "argocd"

// Up rehearses a bootstrap on a local cluster: `wavecd up`. Zero fields
// take the defaults of the command's flags.
type Up struct {
	// Out receives the timeline and the summary.
	Out io.Writer
	// Workspace is the rehearsal's directory (default .wavecd).
	Workspace string
	// Repo is a folder, a Git repository or a repository URL (default ".").
	Repo string
	// Root is the root manifest's path inside Repo (default apps/root.yaml).
	Root string
	// Settings is a file of settings objects (argocd-cm) or an argo-cd
	// Helm chart values file; "" removes any argocd-cm an earlier run left.
	Settings string
	// Profile is the local cluster's rehearsal profile: node groups, CNI
	// mode, images that run a process, workload overrides, an ingress
	// controller. Without one the cluster has Nodes plain nodes.
	Profile string
	// TimeScale multiplies every simulated delay of the cluster (default 1).
	TimeScale float64
	// Mirrors are extra URL=PATH mirrors for the controller.
	Mirrors []string
	// PluginsDir holds Config Management Plugins for the controller.
	PluginsDir string
	// Nodes is the number of simulated nodes of a new cluster (default 2).
	Nodes int
	// Fresh stops and removes an existing workspace first.
	Fresh bool
	// ExitWhenSettled returns once every app settled, or with a
	// *NotSettledError when the rehearsal stalls or times out.
	ExitWhenSettled bool
	// Timeout bounds a rehearsal with ExitWhenSettled (default 10m).
	Timeout time.Duration
	// StallAfter is how long nothing may change before the rehearsal
	// counts as stalled (default 2m).
	StallAfter time.Duration
	// SettleFor is how long every app must stay settled (default 2s).
	SettleFor time.Duration
	// Listen, when set, serves /healthz and /readyz on that address.
	Listen string
	// UI, when set, serves the web UI and API on that address, without
	// TLS (a rehearsal listens on loopback).
	UI string
	// LocalCluster is the wavecd-localcluster binary (default:
	// localcluster.Find).
	LocalCluster string
	// RouteLogs, when set, receives the controller log file once the
	// workspace exists. The in-process controller logs through the
	// process-wide loggers, so only the caller that owns the process (the
	// CLI) may point them there.
	RouteLogs func(w io.Writer)
}

func (u *Up) defaults() {
	if u.Out == nil {
		u.Out = io.Discard
	}
	if u.Repo == "" {
		u.Repo = "."
	}
	if u.Root == "" {
		u.Root = filepath.Join("apps", "root.yaml")
	}
	if u.Nodes <= 0 {
		u.Nodes = 2
	}
	if u.Timeout <= 0 {
		u.Timeout = 10 * time.Minute
	}
	if u.StallAfter <= 0 {
		u.StallAfter = 2 * time.Minute
	}
	if u.SettleFor <= 0 {
		u.SettleFor = 2 * time.Second
	}
	if u.TimeScale <= 0 {
		u.TimeScale = 1
	}
}

// session is what a prepared rehearsal runs with.
type session struct {
	ws       Workspace
	cfg      *rest.Config
	repo     snapshot.Served
	settings *settings.Settings
	mirrors  source.Mirrors
	// generated are the Applications the root's ApplicationSets make.
	generated []*unstructured.Unstructured
}

// rootApps are the root manifest's objects and the Applications its
// ApplicationSets make (withGenerated).
func (s *session) rootApps() []*unstructured.Unstructured {
	return withGenerated(s.repo.Root, s.generated)
}

// Run rehearses until the apps settle (with ExitWhenSettled) or ctx ends,
// then stops the controller and leaves the cluster running.
func (u *Up) Run(ctx context.Context) error {
	u.defaults()
	p := &timeline.Printer{Out: u.Out, Start: time.Now(), Scale: u.TimeScale}
	s, closeLog, err := u.prepare(ctx, p)
	if err != nil {
		return err
	}
	defer closeLog()
	if err := u.startCluster(ctx, p, s); err != nil {
		return err
	}
	if err := u.bootstrap(ctx, p, s); err != nil {
		return err
	}
	return u.follow(ctx, p, s)
}

// prepare checks the inputs, sets up the workspace and serves the
// repository: everything that needs no cluster, so mistakes show first.
func (u *Up) prepare(ctx context.Context, p *timeline.Printer) (*session, func(), error) {
	s := &session{mirrors: source.Mirrors{}}
	if err := u.readInputs(s); err != nil {
		return nil, nil, err
	}
	var err error
	if s.ws, err = NewWorkspace(u.Workspace); err != nil {
		return nil, nil, err
	}
	if u.LocalCluster == "" {
		if u.LocalCluster, err = localcluster.Find(); err != nil {
			return nil, nil, err
		}
	}
	if u.Fresh {
		if err := (&Down{Workspace: s.ws.Dir, LocalCluster: u.LocalCluster}).Run(ctx); err != nil {
			return nil, nil, fmt.Errorf("--fresh: %w", err)
		}
	}
	if err := s.ws.ensure(); err != nil {
		return nil, nil, err
	}
	log, err := os.Create(s.ws.ControllerLog())
	if err != nil {
		return nil, nil, fmt.Errorf("create controller log: %w", err)
	}
	if u.RouteLogs != nil {
		u.RouteLogs(log)
	}
	if err := u.serve(ctx, p, s); err != nil {
		log.Close()
		return nil, nil, err
	}
	return s, func() { log.Close() }, nil
}

// readInputs reads the settings file, the profile's path and the
// --mirror flags.
func (u *Up) readInputs(s *session) error {
	var err error
	if u.Settings != "" {
		if s.settings, err = readSettings(u.Settings, Namespace); err != nil {
			return err
		}
	}
	if u.Profile != "" {
		if u.Profile, err = existingFile("--profile", u.Profile); err != nil {
			return err
		}
	}
	for _, m := range u.Mirrors {
		if err := s.mirrors.AddFlag(m); err != nil {
			return fmt.Errorf("--mirror: %w", err)
		}
	}
	return nil
}

// serve prepares the repository and maps the root apps' URLs to it;
// --mirror entries win over these.
func (u *Up) serve(ctx context.Context, p *timeline.Printer, s *session) error {
	var err error
	s.repo, err = snapshot.Serve(ctx, snapshot.ServeOptions{
		Repo: u.Repo, Root: u.Root, Namespace: Namespace, Dst: s.ws.Repo(), Exclude: []string{s.ws.Dir},
	})
	if err != nil {
		return err
	}
	mirrors := manifest.Mirrors(s.repo.Root, s.repo.Path)
	if s.repo.URL != "" {
		mirrors.Add(s.repo.URL, s.repo.Path)
	}
	for url, path := range s.mirrors {
		mirrors[url] = path
	}
	s.mirrors = mirrors
	p.Sayf("repo %s: %s", u.Repo, s.repo.Describe())
	g := generateSets(ctx, s.repo.Root, s.settings, s.mirrors, s.ws.Cache())
	for _, w := range g.warnings {
		p.Sayf("root: warning: %s", w)
	}
	s.generated = g.apps
	addMirrors(s.mirrors, g.apps, s.repo.Path)
	return nil
}

// startCluster starts or reuses the local cluster and loads its kubeconfig.
func (u *Up) startCluster(ctx context.Context, p *timeline.Printer, s *session) error {
	cl := localcluster.Cluster{Binary: u.LocalCluster, Dir: s.ws.Cluster()}
	start := localcluster.StartOptions{Nodes: u.Nodes, Profile: u.Profile, TimeScale: u.TimeScale}
	if u.Profile != "" {
		start.Nodes = 0
	}
	how, st, err := cl.EnsureRunning(ctx, start, s.ws.ClusterStart())
	if err != nil {
		return err
	}
	if err := cl.CopyKubeconfig(s.ws.Kubeconfig()); err != nil {
		return err
	}
	p.Sayf("cluster %s: %d/%d nodes ready, kubeconfig %s", how, st.NodesReady, st.NodesTotal, displayPath(s.ws.Kubeconfig()))
	if u.TimeScale != 1 {
		p.Sayf("time scale %g: every simulated delay (probes, back-off, run times, node start-up) is %gx as long; "+
			"lines show the rehearsal's seconds | the seconds at full scale", u.TimeScale, u.TimeScale)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.ws.Kubeconfig())
	if err != nil {
		return fmt.Errorf("load %s: %w", s.ws.Kubeconfig(), err)
	}
	kube.DefaultRateLimit(cfg)
	s.cfg = cfg
	return nil
}

// bootstrap installs the CRDs and settings and refreshes apps an earlier
// run left.
func (u *Up) bootstrap(ctx context.Context, p *timeline.Printer, s *session) error {
	b, err := newBootstrap(s.cfg, Namespace)
	if err != nil {
		return err
	}
	if err := b.prepare(ctx, s.settings, s.mirrors); err != nil {
		return err
	}
	sayWarnings(p, s.settings)
	if err := expect(ctx, p, b, s.rootApps(), s.mirrors, s.ws.Cache()); err != nil {
		return err
	}
	settings := "none (argocd-cm removed)"
	if u.Settings != "" {
		settings = u.Settings
	}
	n, err := b.refreshApps(ctx)
	if err != nil {
		return err
	}
	p.Sayf("CRDs installed; settings: %s; %d Applications from an earlier run", settings, n)
	return nil
}

// displayPath shows path relative to the working directory when inside it.
func displayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// sayWarnings prints what the settings file left out.
func sayWarnings(p *timeline.Printer, s *settings.Settings) {
	if s == nil {
		return
	}
	for _, w := range s.Warnings {
		p.Sayf("settings: warning: %s", w)
	}
}

// expect renders the bootstrap and tells the cluster which Services it
// will hold, so clients of those a later wave creates crash-loop as on a
// real cluster.
func expect(ctx context.Context, p *timeline.Printer, b *bootstrap, root []*unstructured.Unstructured, mirrors source.Mirrors, cacheDir string) error {
	caps, err := b.capabilities()
	if err != nil {
		p.Sayf("inventory: warning: the local cluster's capabilities: %v (Helm's defaults apply)", err)
	}
	inv := bootstrapServices(ctx, root, mirrors, filepath.Join(cacheDir, "inventory"), caps)
	for _, w := range inv.warnings {
		p.Sayf("inventory: warning: %s", w)
	}
	if err := b.expectServices(ctx, inv.services); err != nil {
		return err
	}
	p.Sayf("inventory: %s in %s rendered ahead", plural(len(inv.services), "Service"), plural(inv.apps, "Application"))
	return nil
}

// plural formats a count and a noun: "1 Service", "2 Services".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// existingFile returns path made absolute, or an error naming flag when
// it is not a file.
func existingFile(flag, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	} else if st.IsDir() {
		return "", fmt.Errorf("%s %s: a folder, want a file", flag, path)
	}
	return abs, nil
}
