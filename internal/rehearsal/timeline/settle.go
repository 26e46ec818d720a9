package timeline

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// SettleOptions are the time windows of the settle decision.
type SettleOptions struct {
	// For is how long everything must stay settled.
	For time.Duration
	// StallAfter ends a rehearsal in which nothing changed for that long.
	StallAfter time.Duration
	// Timeout bounds the whole rehearsal.
	Timeout time.Duration
}

// Decision is the settle decision of `wavecd up` at one instant.
type Decision int

// The decisions.
const (
	// Waiting: some app has not settled, and the time windows are open.
	Waiting Decision = iota
	// Settled: every app Synced and Healthy with no sync running, and
	// nothing changed for SettleOptions.For.
	Settled
	// Stalled: nothing changed for SettleOptions.StallAfter.
	Stalled
	// TimedOut: SettleOptions.Timeout passed.
	TimedOut
)

// Decide says whether the rehearsal settled, stalled or timed out at now.
func (t *Tracker) Decide(now time.Time, o SettleOptions) Decision {
	quiet := now.Sub(t.lastChange)
	switch {
	case len(t.Unsettled()) == 0 && quiet >= o.For:
		return Settled
	case o.Timeout > 0 && now.Sub(t.start) >= o.Timeout:
		return TimedOut
	case o.StallAfter > 0 && quiet >= o.StallAfter:
		return Stalled
	}
	return Waiting
}

// LastChange is when the last event worth a line came.
func (t *Tracker) LastChange() time.Time { return t.lastChange }

// Unsettled lists the apps that are not Synced and Healthy with no sync
// running (PostSync hooks included) since this rehearsal started, with
// the reason; with no app at all it says so.
func (t *Tracker) Unsettled() []string {
	var out []string
	present := 0
	for _, name := range t.order {
		a := t.apps[name]
		if a.gone {
			if a.root {
				out = append(out, name+": not created yet")
			}
			continue
		}
		present++
		if why := a.unsettledReason(t.start); why != "" {
			out = append(out, name+": "+why)
		}
	}
	if present == 0 && len(out) == 0 {
		out = append(out, "no Application yet")
	}
	return out
}

func (a *appTrack) unsettledReason(start time.Time) string {
	if c := a.errorCondition(); c != "" {
		return c
	}
	switch {
	case a.reconciledAt.Before(start.Truncate(time.Second)):
		return "not compared by this run's controller yet"
	case a.running || a.operation:
		if a.wait != "" {
			return "sync running, " + a.wait
		}
		return "sync running"
	case a.failed != "":
		return "sync failed: " + a.failed
	case a.manualSyncHint() != "":
		return a.manualSyncHint()
	case a.sync != "Synced" || a.health != "Healthy":
		s := orDash(a.sync) + " " + orDash(a.health)
		switch {
		case a.health == "Healthy":
		case a.blocker != "":
			s += ", waits on " + a.blocker
		case a.healthMsg != "":
			s += ": " + a.healthMsg
		}
		return s
	}
	return ""
}

// errorCondition returns the first error condition (ComparisonError,
// SyncError, ...) as "Type: message", or "".
func (a *appTrack) errorCondition() string {
	var types []string
	for typ := range a.conditions {
		if strings.HasSuffix(typ, "Error") {
			types = append(types, typ)
		}
	}
	if len(types) == 0 {
		return ""
	}
	sort.Strings(types)
	return types[0] + ": " + a.conditions[types[0]]
}

// WriteSummary prints the summary table: each app's wave, when it turned
// Synced and Healthy (seconds since the start), and its pods' restarts.
func (t *Tracker) WriteSummary(w io.Writer) error {
	restarts := map[*appTrack]int32{}
	for _, p := range t.pods {
		if a := t.appOfPod(p); a != nil {
			restarts[a] += p.restarts
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	apps := t.summaryOrder()
	notes := slices.ContainsFunc(apps, func(a *appTrack) bool { return a.note() != "" })
	header := "APP\tWAVE\tSYNCED AT\tHEALTHY AT\tPOD RESTARTS"
	if notes {
		header += "\tNOTE"
	}
	fmt.Fprintln(tw, header)
	for _, a := range apps {
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%d", a.name, a.waveColumn(), seconds(a.synced, a.syncedAt),
			seconds(a.healthy, a.healthyAt), restarts[a])
		if notes {
			row += "\t" + a.note()
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// summaryOrder lists the root apps first, then the others by wave and name.
func (t *Tracker) summaryOrder() []*appTrack {
	var roots, others []*appTrack
	for _, name := range t.order {
		switch a := t.apps[name]; {
		case a.gone:
		case a.root:
			roots = append(roots, a)
		default:
			others = append(others, a)
		}
	}
	sort.SliceStable(others, func(i, j int) bool {
		wi, wj := others[i].waveNumber(), others[j].waveNumber()
		if wi != wj {
			return wi < wj
		}
		return others[i].name < others[j].name
	})
	return append(roots, others...)
}

// note is the summary's last column: why an app did not settle when that
// is a failed sync, one failing and retried, or a sync nobody started;
// else "".
func (a *appTrack) note() string {
	switch {
	case a.failed != "":
		return report.Shorten("sync failed: "+a.failed, maxNote)
	case a.retrying():
		return report.Shorten("sync failing: "+a.wait, maxNote)
	case a.manualSyncHint() != "":
		return "OutOfSync, automated sync off: wavecd app sync " + a.name
	}
	return ""
}

// retrying says the app's sync failed and waits for its next attempt.
func (a *appTrack) retrying() bool {
	return a.running && strings.HasPrefix(a.wait, "Retrying attempt")
}

// maxNote keeps the summary's note column to a line.
const maxNote = 100

func (a *appTrack) waveNumber() int {
	n, err := strconv.Atoi(strings.TrimSpace(a.wave))
	if err != nil {
		return 0
	}
	return n
}

func (a *appTrack) waveColumn() string {
	if a.root && a.wave == "" {
		return "-"
	}
	return strconv.Itoa(a.waveNumber())
}

func seconds(reached bool, at time.Duration) string {
	if !reached {
		return "-"
	}
	return fmt.Sprintf("%.1fs", at.Seconds())
}
