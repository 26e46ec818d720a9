package timeline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// Judge decides how a rehearse run ends:
//
//   - converged: every app Synced and Healthy with no sync running, for
//     SettleFor;
//   - stalled: an app carries the engine's SyncStalled condition (a wave
//     made no progress for the stall timeout while its pods cannot be
//     scheduled) and neither the apps nor the nodes and pods changed since
//     for the grace period, so a provisioner that is at work is given its
//     time; or nothing at all changed for twice the stall timeout;
//   - timed out: neither within Timeout.
type Judge struct {
	StallTimeout time.Duration
	SettleFor    time.Duration
	Timeout      time.Duration

	verdict   report.Verdict
	at        time.Time
	settledAt time.Time
	reason    string
}

// grace is how long a stall must hold with nothing changing.
func (j *Judge) grace() time.Duration { return min(10*time.Second, j.StallTimeout/2) }

// Run prints the timeline of events until the run is judged, ctx ends or
// fatal reports an error.
func (j *Judge) Run(ctx context.Context, p *Printer, t *Tracker, s *Sampler, events <-chan Observation, fatal <-chan error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := p.Start.Add(j.Timeout)
	for {
		select {
		case <-ctx.Done():
			p.Sayf("interrupted")
			return ctx.Err()
		case err := <-fatal:
			return err
		case o := <-events:
			for _, l := range t.Observe(o) {
				p.Print(l)
			}
		case now := <-tick.C:
			if j.decide(now, t, s.lastActivity(), deadline) {
				p.Sayf("%s", j.line(p.Start))
				return nil
			}
		}
	}
}

// decide judges the run at now; true once it is over.
func (j *Judge) decide(now time.Time, t *Tracker, activity, deadline time.Time) bool {
	if len(t.Unsettled()) == 0 {
		if j.settledAt.IsZero() {
			j.settledAt = now
		}
		if now.Sub(j.settledAt) >= j.SettleFor {
			j.verdict, j.at = report.Converged, j.settledAt
			return true
		}
		return false
	}
	j.settledAt = time.Time{}
	last := t.lastChange
	if activity.After(last) {
		last = activity
	}
	quiet := now.Sub(last)
	if stalls := stalledApps(t); len(stalls) > 0 && quiet >= j.grace() {
		j.verdict, j.at = report.Stalled, t.start.Add(earliestStall(t))
		j.reason = stalls[0].Message
		return true
	}
	if quiet >= 2*j.StallTimeout && len(retrying(t)) == 0 {
		j.verdict, j.at = report.Stalled, last
		j.reason = fmt.Sprintf("nothing changed for %s", quiet.Round(time.Second))
		return true
	}
	if !now.Before(deadline) {
		j.verdict, j.at = report.TimedOut, now
		j.reason = "not settled within " + j.Timeout.String()
		return true
	}
	return false
}

func (j *Judge) line(start time.Time) string {
	at := j.at.Sub(start).Seconds()
	switch j.verdict {
	case report.Converged:
		return fmt.Sprintf("converged at %.1fs: every app Synced and Healthy, no sync running", at)
	case report.Stalled:
		return fmt.Sprintf("stalled at %.1fs: %s", at, j.reason)
	default: // a timed-out run's reason says it
	}
	return j.reason
}

// Result fills a run's verdict, apps, node and pod counts and webhook
// refusals from what the judge, the tracker and the sampler know; end is
// how long the run took.
func (j *Judge) Result(res report.RunResult, t *Tracker, s *Sampler, end float64) report.RunResult {
	res.Verdict = j.verdict
	if res.Verdict == "" {
		res.Verdict = report.TimedOut
		j.at = t.start.Add(time.Duration(end * float64(time.Second)))
		j.reason = "interrupted"
	}
	res.At = round1(j.at.Sub(t.start).Seconds())
	res.End = round1(end)
	if res.Verdict != report.Converged {
		res.Reason = stripStalled(j.reason)
		res.StalledApps = stalledApps(t)
		res.Waiting = t.Unsettled()
	}
	res.Apps = appRecords(t)
	res.Samples = s.result(round1(end))
	res.WebhookRefused = t.webhookRefusals()
	return res
}

// appRecords lists the apps the run saw, roots first, then by wave, and
// after them the child Applications a parent wants but never created.
func appRecords(t *Tracker) []report.AppRecord {
	var out []report.AppRecord
	seen := map[string]bool{}
	for _, a := range t.summaryOrder() {
		seen[a.name] = true
		out = append(out, report.AppRecord{
			Name: a.name, Root: a.root, Wave: a.waveNumber(), Sync: a.sync, Health: a.health,
			Created: secondsOf(a.createdAt), SyncStarted: secondsOf(a.firstSyncAt),
			Healthy: healthySeconds(a), Settled: secondsOf(a.settledAt), Stalled: secondsOf(a.stalledAt),
		})
	}
	var missing []report.AppRecord
	for _, name := range t.order {
		for child, wave := range t.apps[name].children {
			if !seen[child] {
				seen[child] = true
				missing = append(missing, report.AppRecord{Name: child, Wave: int(wave), Created: -1, SyncStarted: -1,
					Healthy: -1, Settled: -1, Stalled: -1})
			}
		}
	}
	sort.Slice(missing, func(i, j int) bool {
		if missing[i].Wave != missing[j].Wave {
			return missing[i].Wave < missing[j].Wave
		}
		return missing[i].Name < missing[j].Name
	})
	return append(out, missing...)
}

// stalledApps lists the apps with a SyncStalled condition: apps other
// than the roots first (their reason names the workload itself), by name.
func stalledApps(t *Tracker) []report.AppStall {
	var out []report.AppStall
	var roots []report.AppStall
	for _, name := range t.order {
		a := t.apps[name]
		msg, ok := a.conditions[v1alpha1.ApplicationConditionSyncStalled]
		if !ok || a.gone {
			continue
		}
		s := report.AppStall{App: name, Message: stripStalled(msg)}
		if a.root {
			roots = append(roots, s)
		} else {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].App < out[j].App })
	return append(out, roots...)
}

// retrying lists the apps whose sync failed and waits for its next
// attempt: the controller will act again, so a quiet cluster is not yet a
// stalled one.
func retrying(t *Tracker) []string {
	var out []string
	for _, name := range t.order {
		if a := t.apps[name]; !a.gone && a.retrying() {
			out = append(out, name)
		}
	}
	return out
}

// earliestStall is when the first SyncStalled condition appeared.
func earliestStall(t *Tracker) time.Duration {
	first := time.Duration(-1)
	for _, a := range t.apps {
		if a.stalledAt >= 0 && (first < 0 || a.stalledAt < first) {
			first = a.stalledAt
		}
	}
	return max(first, 0)
}

func stripStalled(msg string) string { return strings.TrimPrefix(msg, "stalled: ") }

// round1 rounds to a tenth, as the report's times are.
func round1(f float64) float64 { return math.Round(f*10) / 10 }

func secondsOf(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return round1(d.Seconds())
}

// healthySeconds is when the app last turned Healthy, -1 when it is not.
func healthySeconds(a *appTrack) float64 {
	if !a.healthy {
		return -1
	}
	return secondsOf(a.healthyAt)
}
