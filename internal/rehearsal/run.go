package rehearsal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/rehearsal/localcluster"
	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
	"github.com/wavecd/wavecd/internal/rehearsal/scenario"
	"github.com/wavecd/wavecd/internal/rehearsal/snapshot"
	"github.com/wavecd/wavecd/internal/rehearsal/timeline"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

// runOptions configure one run of a scenario.
type runOptions struct {
	// dir is the repository, scenario one of its scenarios.
	dir      string
	scenario *scenario.Scenario
	run      int
	seed     int64
	ws       Workspace
	// binary is wavecd-localcluster.
	binary string
	// settings and profile override the scenario's; timeScale scales the
	// cluster.
	settings     string
	profile      string
	timeScale    float64
	stallTimeout time.Duration
	timeout      time.Duration
	settleFor    time.Duration
	// out receives the timeline.
	out       io.Writer
	routeLogs func(io.Writer)
	inspect   func(ctx context.Context, run int, cfg *rest.Config) error
	// pluginsDir holds Config Management Plugins for the controller.
	pluginsDir string
	// mirrors are extra URL=PATH mirrors (Rehearse.Mirrors).
	mirrors []string
	// during runs while the run does (Rehearse.During).
	during func(ctx context.Context, cfg *rest.Config)
}

// stagedRun is a run's inputs, ready before any cluster starts.
type stagedRun struct {
	root     []*unstructured.Unstructured
	settings *settings.Settings
	mirrors  source.Mirrors
	profile  string // absolute path of the cluster's profile, or ""
	drawn    map[string]any
	// generated is what the root's ApplicationSets make.
	generated generated
}

// runScenario runs a scenario once on a new local cluster in o.ws and
// stops that cluster before it returns.
func runScenario(ctx context.Context, o runOptions) (res report.RunResult, err error) {
	st, err := stage(o)
	if err != nil {
		return res, err
	}
	st.generated = generateSets(ctx, st.root, st.settings, st.mirrors, o.ws.Cache())
	addMirrors(st.mirrors, st.generated.apps, o.ws.Repo())
	log, err := os.Create(o.ws.ControllerLog())
	if err != nil {
		return res, fmt.Errorf("create controller log: %w", err)
	}
	defer log.Close()
	if o.routeLogs != nil {
		o.routeLogs(log)
	}
	cl := localcluster.Cluster{Binary: o.binary, Dir: o.ws.Cluster()}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if stopErr := cl.Stop(stopCtx); stopErr != nil && err == nil {
			err = stopErr
		}
		res.Logs = removeClusterKeepingLogs(o.ws.Cluster())
	}()
	cfg, err := startRunCluster(ctx, cl, localcluster.StartOptions{Nodes: 1, Profile: st.profile, TimeScale: o.timeScale}, o.ws)
	if err != nil {
		return res, err
	}
	b, err := newBootstrap(cfg, Namespace)
	if err != nil {
		return res, err
	}
	if err := b.prepare(ctx, st.settings, st.mirrors); err != nil {
		return res, err
	}
	res, err = follow(ctx, o, st, cfg, b)
	if err == nil && o.inspect != nil {
		err = o.inspect(ctx, o.run, cfg)
	}
	return res, err
}

// stage snapshots the repository with the scenario's files, reads the
// settings and prepares the root manifest with the scenario's values.
func stage(o runOptions) (*stagedRun, error) {
	if err := os.RemoveAll(o.ws.Dir); err != nil {
		return nil, fmt.Errorf("remove the last run's workspace: %w", err)
	}
	if err := o.ws.ensure(); err != nil {
		return nil, err
	}
	s := o.scenario
	st := &stagedRun{drawn: s.Draw(o.seed)}
	root, err := manifest.ReadRoot(filepath.Join(o.dir, s.Root), Namespace)
	if err != nil {
		return nil, err
	}
	st.root = root
	extra := map[string]string{}
	binDir := filepath.Dir(o.binary)
	for _, f := range s.Files {
		extra[filepath.ToSlash(f.To)] = filepath.Join(binDir, f.From)
	}
	if _, err := snapshot.Write(snapshot.Options{
		Src: o.dir, Dst: o.ws.Repo(), Exclude: []string{o.ws.Dir, filepath.Join(o.dir, DefaultWorkspace)},
		Branches: manifest.Branches(root), Extra: extra,
	}); err != nil {
		return nil, err
	}
	st.mirrors = manifest.Mirrors(root, o.ws.Repo())
	for _, m := range o.mirrors {
		if err := st.mirrors.AddFlag(m); err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
	}
	settingsFile := o.settings
	if settingsFile == "" && s.Settings != "" {
		settingsFile = filepath.Join(o.dir, s.Settings)
	}
	if settingsFile != "" {
		if st.settings, err = readSettings(settingsFile, Namespace); err != nil {
			return nil, err
		}
	}
	switch {
	case o.profile != "":
		st.profile = o.profile
	case s.Profile != "":
		st.profile = filepath.Join(o.dir, s.Profile)
	}
	return st, nil
}

// startRunCluster starts the run's cluster and returns its client config.
func startRunCluster(ctx context.Context, cl localcluster.Cluster, start localcluster.StartOptions, ws Workspace) (*rest.Config, error) {
	if start.Profile != "" {
		start.Nodes = 0
	}
	if err := cl.Start(ctx, start); err != nil {
		return nil, err
	}
	if err := cl.CopyKubeconfig(ws.Kubeconfig()); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", ws.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", ws.Kubeconfig(), err)
	}
	kube.DefaultRateLimit(cfg)
	return cfg, nil
}

// follow runs the controller and the watches, applies the root and
// judges the run.
func follow(ctx context.Context, o runOptions, st *stagedRun, cfg *rest.Config, b *bootstrap) (report.RunResult, error) {
	res := report.RunResult{Run: o.run, Seed: o.seed, Drawn: map[string]string{}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return res, fmt.Errorf("build client: %w", err)
	}
	for path, v := range st.drawn {
		res.Drawn[path] = fmt.Sprint(v)
	}
	root, err := scenario.Root(st.root, o.scenario, scenario.Values(st.drawn))
	if err != nil {
		return res, err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	events := make(chan timeline.Observation, 1024)
	if _, err := timeline.Watch(watchCtx, cfg, Namespace, events); err != nil {
		return res, err
	}
	fatal := make(chan error, 1)
	stopController, err := runControllers(ctx, cfg, controllerSetup{mirrors: st.mirrors, cacheDir: o.ws.Cache(), stallTimeout: o.stallTimeout, pluginsDir: o.pluginsDir}, fatal)
	if err != nil {
		return res, err
	}
	defer stopController()
	rec := &timelineRecorder{out: o.out}
	p := &timeline.Printer{Out: rec, Start: time.Now(), Scale: o.timeScale}
	sayWarnings(p, st.settings)
	for _, w := range st.generated.warnings {
		p.Sayf("root: warning: %s", w)
	}
	apps := withGenerated(root, st.generated.apps)
	if err := expect(ctx, p, b, apps, st.mirrors, o.ws.Cache()); err != nil {
		return res, err
	}
	t := timeline.NewTracker(p.Start, manifest.Names(apps))
	smp := timeline.NewSampler(client, p.Start)
	go smp.Run(watchCtx)
	if err := b.applyRoot(ctx, root); err != nil {
		return res, err
	}
	p.Sayf("run %d (seed %d): root applied", o.run, o.seed)
	if o.during != nil {
		go o.during(watchCtx, cfg)
	}
	j := timeline.Judge{StallTimeout: o.stallTimeout, SettleFor: o.settleFor, Timeout: o.timeout}
	err = j.Run(ctx, p, t, smp, events, fatal)
	res = j.Result(res, t, smp, time.Since(p.Start).Seconds())
	if res.Verdict != report.Converged {
		res.Operators = operatorReports(ctx, cfg, b.client, Namespace)
		for _, r := range res.Operators {
			p.Sayf("operator reports %s", r)
		}
	}
	res.Timeline = rec.lines
	return res, err
}

// timelineRecorder passes timeline lines on and keeps them for the report.
type timelineRecorder struct {
	out   io.Writer
	lines []string
	part  []byte
}

func (r *timelineRecorder) Write(b []byte) (int, error) {
	if r.out != nil {
		if _, err := r.out.Write(b); err != nil {
			return 0, err
		}
	}
	r.part = append(r.part, b...)
	for {
		i := bytes.IndexByte(r.part, '\n')
		if i < 0 {
			break
		}
		r.lines = append(r.lines, string(r.part[:i]))
		r.part = r.part[i+1:]
	}
	return len(b), nil
}

// removeClusterKeepingLogs removes a stopped cluster's directory but its
// logs/ (the components' logs, and the output of the processes that ran
// pods: operators, Karpenter), and returns the processes' logs.
func removeClusterKeepingLogs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "logs" {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "process-*.log"))
	return logs
}
