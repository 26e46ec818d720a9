package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/rehearsal/localcluster"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
	"github.com/wavecd/wavecd/internal/rehearsal/scenario"
)

// Defaults of `wavecd rehearse`.
const (
	DefaultRehearseStallTimeout = 20 * time.Second
	DefaultRehearseTimeout      = 100 * time.Second
)

// Rehearse runs one scenario of a repository on fresh local clusters and
// reports how each run ended: `wavecd rehearse`. Zero fields take the
// defaults of the command's flags.
type Rehearse struct {
	// Out receives the timeline and the summary, or the JSON report.
	Out io.Writer
	// Dir is the repository: a folder with scenarios/<name>.yaml.
	Dir string
	// Scenario names the scenario.
	Scenario string
	// Runs is how many runs, each on a new cluster (default 1).
	Runs int
	// Seed is the first run's seed; run i uses Seed+i-1 (default 1).
	Seed int64
	// Report, when set, is where the HTML report is written.
	Report string
	// Settings, when set, replaces the scenario's settings file.
	Settings string
	// Profile, when set, replaces the scenario's profile.
	Profile string
	// TimeScale multiplies every simulated delay of the cluster (default 1).
	TimeScale float64
	// StallTimeout is the controller's stall timeout (default 20s).
	StallTimeout time.Duration
	// PluginsDir holds Config Management Plugins for the controller.
	PluginsDir string
	// Mirrors are extra URL=PATH (or URL=oci://HOST/PATH) mirrors for the
	// controller, as up's --mirror.
	Mirrors []string
	// Timeout bounds each run from the root's apply (default 100s).
	Timeout time.Duration
	// JSON prints the report as JSON instead of the timeline and summary.
	JSON bool
	// Workspace holds one folder per run (default .wavecd/rehearse).
	Workspace string
	// LocalCluster is the wavecd-localcluster binary (default:
	// localcluster.Find).
	LocalCluster string
	// RouteLogs, when set, receives each run's controller log file; see Up.
	RouteLogs func(w io.Writer)
	// During, when set, runs in its own goroutine from the root's apply
	// until the run ends (its context ends then): tests strike faults
	// there, such as killing an operator's process.
	During func(ctx context.Context, cfg *rest.Config)
	// Inspect, when set, is called after each run with its cluster, before
	// the cluster stops and once the controller has: tests read the
	// cluster's state there.
	Inspect func(ctx context.Context, run int, cfg *rest.Config) error
}

// NotConvergedError reports a rehearsal with runs that did not converge.
// The CLI exits with ExitNotSettled.
type NotConvergedError struct {
	Scenario string
	Summary  report.Summary
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("scenario %s: %d of %d runs did not converge", e.Scenario, e.Summary.Runs-e.Summary.Converged, e.Summary.Runs)
}

func (r *Rehearse) defaults() {
	if r.Out == nil {
		r.Out = io.Discard
	}
	if r.Dir == "" {
		r.Dir = "."
	}
	if r.Runs <= 0 {
		r.Runs = 1
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if r.StallTimeout <= 0 {
		r.StallTimeout = DefaultRehearseStallTimeout
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultRehearseTimeout
	}
	if r.Workspace == "" {
		r.Workspace = filepath.Join(DefaultWorkspace, "rehearse")
	}
	if r.TimeScale <= 0 {
		r.TimeScale = 1
	}
}

// Run runs the scenario's runs one after the other, prints the summary
// (or the JSON report), writes the HTML report, and returns the report
// with a *NotConvergedError when a run did not converge.
func (r *Rehearse) Run(ctx context.Context) (*report.Report, error) {
	r.defaults()
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", r.Dir, err)
	}
	s, err := scenario.Load(dir, r.Scenario)
	if err != nil {
		return nil, err
	}
	if err := r.check(s); err != nil {
		return nil, err
	}
	base, err := filepath.Abs(r.Workspace)
	if err != nil {
		return nil, fmt.Errorf("resolve workspace %s: %w", r.Workspace, err)
	}
	rep := &report.Report{Scenario: s.Name, Description: s.Description, Expect: s.Expect}
	timeline := r.Out
	if r.JSON {
		timeline = nil
	}
	for i := 1; i <= r.Runs; i++ {
		o := runOptions{
			dir: dir, scenario: s, run: i, seed: r.Seed + int64(i) - 1,
			ws:     Workspace{Dir: filepath.Join(base, fmt.Sprintf("%s-%d", s.Name, i))},
			binary: r.LocalCluster, settings: r.Settings, profile: r.Profile, timeScale: r.TimeScale,
			stallTimeout: r.StallTimeout, timeout: r.Timeout, settleFor: 2 * time.Second,
			out: timeline, routeLogs: r.RouteLogs, inspect: r.Inspect, pluginsDir: r.PluginsDir, mirrors: r.Mirrors, during: r.During,
		}
		if timeline != nil && r.Runs > 1 {
			fmt.Fprintf(timeline, "\n== run %d of %d (seed %d)\n", i, r.Runs, o.seed)
		}
		res, err := runScenario(ctx, o)
		if err != nil {
			return rep, fmt.Errorf("run %d: %w", i, err)
		}
		rep.Runs = append(rep.Runs, res)
	}
	rep.Summary = report.Summarize(rep.Runs)
	if err := r.output(rep); err != nil {
		return rep, err
	}
	if !rep.AllConverged() {
		return rep, &NotConvergedError{Scenario: s.Name, Summary: rep.Summary}
	}
	return rep, nil
}

// check finds the local cluster and checks what the scenario needs beside
// it, and the files the options name.
func (r *Rehearse) check(s *scenario.Scenario) error {
	var err error
	if r.LocalCluster == "" {
		if r.LocalCluster, err = localcluster.Find(); err != nil {
			return err
		}
	}
	if err := s.CheckNeeds(filepath.Dir(r.LocalCluster)); err != nil {
		return err
	}
	if r.Profile != "" {
		if r.Profile, err = existingFile("--profile", r.Profile); err != nil {
			return err
		}
	}
	if r.Settings != "" {
		if r.Settings, err = existingFile("--settings", r.Settings); err != nil {
			return err
		}
	}
	return nil
}

// output prints the summary or the JSON report and writes the HTML one.
func (r *Rehearse) output(rep *report.Report) error {
	if r.Report != "" {
		f, err := os.Create(r.Report)
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		err = report.WriteHTML(f, rep)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write report %s: %w", r.Report, err)
		}
	}
	if r.JSON {
		enc := json.NewEncoder(r.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintln(r.Out)
	if err := rep.WriteSummary(r.Out); err != nil {
		return err
	}
	if r.Report != "" {
		fmt.Fprintf(r.Out, "report: %s\n", displayPath(r.Report))
	}
	return nil
}
