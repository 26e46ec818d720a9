package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Verdict is how one rehearsal run ended.
type Verdict string

// The verdicts.
const (
	// Converged: every app Synced and Healthy with no sync running.
	Converged Verdict = "converged"
	// Stalled: a sync's wave made no progress while its pods could not be
	// scheduled (the engine's SyncStalled), or nothing changed at all.
	Stalled Verdict = "stalled"
	// TimedOut: neither within the run's time limit.
	TimedOut Verdict = "timed out"
)

// Report is the outcome of `wavecd rehearse`: one scenario, one or more runs.
type Report struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// Expect is the verdict the scenario is meant to reach.
	Expect string      `json:"expect,omitempty"`
	Runs   []RunResult `json:"runs"`
	// Summary counts the runs' verdicts.
	Summary Summary `json:"summary"`
}

// RunResult is what one run of a scenario did. Times are seconds since
// the root Application was applied.
type RunResult struct {
	Run     int     `json:"run"`
	Seed    int64   `json:"seed"`
	Verdict Verdict `json:"verdict"`
	// At is when the run converged, or when the stall began.
	At float64 `json:"at"`
	// Reason says why a run that did not converge is stuck.
	Reason string `json:"reason,omitempty"`
	// StalledApps are the apps with a SyncStalled condition, and its message.
	StalledApps []AppStall `json:"stalledApps,omitempty"`
	// Waiting lists the apps not settled at the end, and why.
	Waiting []string `json:"waiting,omitempty"`
	// Drawn are the values the run's seed drew (scenario randomize).
	Drawn map[string]string `json:"drawn,omitempty"`
	// WebhookRefused counts the syncs that failed because the API server
	// could not call an admission webhook (its Service had no ready
	// endpoint).
	WebhookRefused int         `json:"webhookRefused,omitempty"`
	Apps           []AppRecord `json:"apps"`
	Samples        []Sample    `json:"samples,omitempty"`
	// End is when the run ended.
	End      float64  `json:"end"`
	Timeline []string `json:"timeline,omitempty"`
	// Operators are what operators report of the custom resources the
	// apps hold, for a run that did not converge: "Kind name (app):
	// Type=Status: message".
	Operators []string `json:"operators,omitempty"`
	// Logs are the output files of the processes that ran pods
	// (operators, Karpenter), kept after the run.
	Logs []string `json:"logs,omitempty"`
}

// AppStall is one app's SyncStalled condition.
type AppStall struct {
	App     string `json:"app"`
	Message string `json:"message"`
}

// AppRecord is one Application over a run. A time is -1 when it never
// happened.
type AppRecord struct {
	Name string `json:"name"`
	Root bool   `json:"root,omitempty"`
	// Wave is its sync wave in its parent.
	Wave        int     `json:"wave"`
	Created     float64 `json:"created"`
	SyncStarted float64 `json:"syncStarted"`
	// Healthy is when it last turned Healthy.
	Healthy float64 `json:"healthy"`
	// Settled is when it last became Synced and Healthy with no sync
	// running.
	Settled float64 `json:"settled"`
	// Stalled is when its SyncStalled condition appeared.
	Stalled float64 `json:"stalled"`
	Sync    string  `json:"sync"`
	Health  string  `json:"health"`
}

// Sample is the cluster's nodes and pods at one time.
type Sample struct {
	At         float64 `json:"at"`
	Nodes      int     `json:"nodes"`
	ReadyNodes int     `json:"readyNodes"`
	// Pending counts Pending pods; Unschedulable those the scheduler
	// cannot place.
	Pending       int `json:"pending"`
	Unschedulable int `json:"unschedulable"`
}

// Summary counts a scenario's runs by verdict, with the times.
type Summary struct {
	Runs      int `json:"runs"`
	Converged int `json:"converged"`
	Stalled   int `json:"stalled"`
	TimedOut  int `json:"timedOut"`
	// ConvergedIn and StalledAt are min, median and max over the runs
	// with that verdict; empty when there is none.
	ConvergedIn []float64 `json:"convergedIn,omitempty"`
	StalledAt   []float64 `json:"stalledAt,omitempty"`
}

// Summarize counts the runs' verdicts.
func Summarize(runs []RunResult) Summary {
	s := Summary{Runs: len(runs)}
	var conv, stall []float64
	for _, r := range runs {
		switch r.Verdict {
		case Converged:
			s.Converged++
			conv = append(conv, r.At)
		case Stalled:
			s.Stalled++
			stall = append(stall, r.At)
		default:
			s.TimedOut++
		}
	}
	s.ConvergedIn, s.StalledAt = spread(conv), spread(stall)
	return s
}

// spread returns min, median and max, rounded to 0.1; nil for no values.
func spread(v []float64) []float64 {
	if len(v) == 0 {
		return nil
	}
	v = slices.Clone(v)
	sort.Float64s(v)
	median := v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return []float64{round1(v[0]), round1(median), round1(v[len(v)-1])}
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// AllConverged reports whether every run converged.
func (r *Report) AllConverged() bool {
	return r.Summary.Converged == r.Summary.Runs && r.Summary.Runs > 0
}

// headline says how a run ended, in a line.
func (r RunResult) headline() string {
	switch r.Verdict {
	case Converged:
		return fmt.Sprintf("converged in %.1fs", r.At)
	case Stalled:
		return fmt.Sprintf("stalled at %.1fs", r.At)
	default: // a timed-out run, below
	}
	return fmt.Sprintf("timed out after %.1fs", r.End)
}

// WriteSummary prints the report's text summary: the verdict and why, the
// apps, the nodes; with several runs, the counts and one line per run.
func (r *Report) WriteSummary(w io.Writer) error {
	fmt.Fprintf(w, "scenario %s: %s\n", r.Scenario, r.Description)
	if len(r.Runs) == 1 {
		return r.writeRun(w, r.Runs[0])
	}
	s := r.Summary
	fmt.Fprintf(w, "runs: %d: %d converged, %d stalled", s.Runs, s.Converged, s.Stalled)
	if s.TimedOut > 0 {
		fmt.Fprintf(w, ", %d timed out", s.TimedOut)
	}
	fmt.Fprintln(w)
	if len(s.ConvergedIn) == 3 {
		fmt.Fprintf(w, "converged in: min %.1fs, median %.1fs, max %.1fs\n", s.ConvergedIn[0], s.ConvergedIn[1], s.ConvergedIn[2])
	}
	if len(s.StalledAt) == 3 {
		fmt.Fprintf(w, "stalled at: min %.1fs, median %.1fs, max %.1fs\n", s.StalledAt[0], s.StalledAt[1], s.StalledAt[2])
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSEED\tVERDICT\tAT\tNODES\tREASON")
	for _, run := range r.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.1fs\t%d\t%s\n", run.Run, run.Seed, run.Verdict, run.At, run.lastSample().Nodes, Shorten(run.Reason, 100))
	}
	return tw.Flush()
}

func (r *Report) writeRun(w io.Writer, run RunResult) error {
	fmt.Fprintf(w, "verdict: %s", run.headline())
	if r.Expect != "" {
		if string(run.Verdict) == r.Expect {
			fmt.Fprintf(w, " (as expected)")
		} else {
			fmt.Fprintf(w, " (expected %s)", r.Expect)
		}
	}
	fmt.Fprintln(w)
	if run.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", run.Reason)
	}
	for _, s := range run.StalledApps {
		if s.Message != run.Reason {
			fmt.Fprintf(w, "  %s stalled too: %s\n", s.App, s.Message)
		}
	}
	if len(run.StalledApps) == 0 {
		for _, s := range run.Waiting {
			fmt.Fprintf(w, "  waiting on %s\n", s)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APP\tWAVE\tCREATED\tSYNC STARTED\tHEALTHY AT\tSTATUS")
	for _, a := range run.Apps {
		wave := fmt.Sprint(a.Wave)
		if a.Root {
			wave = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, wave, secondsOrDash(a.Created), secondsOrDash(a.SyncStarted),
			secondsOrDash(a.Healthy), a.Status())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first, last := run.firstSample(), run.lastSample()
	fmt.Fprintf(w, "\nnodes: %d at the start, %d at the end (%d Ready); pending pods at the end: %d (%d unschedulable)\n",
		first.Nodes, last.Nodes, last.ReadyNodes, last.Pending, last.Unschedulable)
	if run.WebhookRefused > 0 {
		fmt.Fprintf(w, "syncs failed calling a webhook without a ready endpoint: %d\n", run.WebhookRefused)
	}
	return nil
}

// status is the app's sync and health at the end.
func (a AppRecord) Status() string {
	if a.Created < 0 {
		return "never created"
	}
	return orDash(a.Sync) + " " + orDash(a.Health)
}

func (r RunResult) firstSample() Sample {
	if len(r.Samples) == 0 {
		return Sample{}
	}
	return r.Samples[0]
}

func (r RunResult) lastSample() Sample {
	if len(r.Samples) == 0 {
		return Sample{}
	}
	return r.Samples[len(r.Samples)-1]
}

func secondsOrDash(s float64) string {
	if s < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", s)
}

// Shorten cuts s to at most n bytes, on a character boundary, and marks
// the cut with "...": a reason or a note in one cell of a summary table.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n]) + "..."
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
