package server

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/diagram"
)

// Beyond these many rows a tree's timeline folds the apps of a wave that
// are Synced and Healthy into one row per wave (?expand=all unfolds them);
// an app's own objects are shown up to maxObjectRows.
const (
	timelineFoldAt = 60
	maxObjectRows  = 60
)

// syncItem is one object or hook of an app's current or last sync.
type syncItem struct {
	Wave                         int64
	Phase, Kind, Namespace, Name string
	Status, HookType, HookPhase  string
	Message                      string
	Hook                         bool
	StartedAt, FinishedAt        time.Time
}

// syncItems lists the sync's objects and hooks: from the engine's saved
// state while it runs, from the result once it ended.
func syncItems(app *v1alpha1.Application, op *v1alpha1.OperationState) []syncItem {
	if op == nil {
		return nil
	}
	var out []syncItem
	if st := application.ProgressOf(op); st != nil {
		for _, t := range st.Tasks {
			if t.Type == v1alpha1.TaskNamespace || t.Phase == v1alpha1.TaskSkipped {
				continue
			}
			it := syncItem{
				Wave: int64(t.Wave), Phase: string(t.SyncPhase), Kind: t.Kind, Namespace: t.Namespace, Name: t.Name,
				Status: cmp.Or(string(t.Result), string(t.Phase)), Message: t.Message, Hook: t.Type == v1alpha1.TaskHook,
				StartedAt: t.StartedAt, FinishedAt: t.FinishedAt,
			}
			if it.Hook {
				it.HookType = string(t.SyncPhase)
			}
			out = append(out, it)
		}
		return out
	}
	if op.SyncResult == nil {
		return nil
	}
	waveOf := map[string]int64{}
	for _, r := range app.Status.Resources {
		waveOf[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name] = r.SyncWave
	}
	for _, r := range op.SyncResult.Resources {
		if r == nil {
			continue
		}
		it := syncItem{
			Wave: waveOf[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name], Phase: cmp.Or(r.SyncPhase, "Sync"),
			Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Status: string(r.Status), HookType: r.HookType,
			HookPhase: r.HookPhase, Message: r.Message, Hook: r.HookType != "",
		}
		if r.StartedAt != nil {
			it.StartedAt = r.StartedAt.Time
		}
		if r.FinishedAt != nil {
			it.FinishedAt = r.FinishedAt.Time
		}
		out = append(out, it)
	}
	return out
}

// timelineView is the Gantt chart of the current or last sync of an app
// and of the apps under it, and its rows as a table.
type timelineView struct {
	SVG    template.HTML
	Origin time.Time
	Rows   []timelineEntry
	// Tree is set when the chart has the apps under the app.
	Tree bool
	// Folded counts the apps folded into wave rows.
	Folded int
}

// timelineEntry is one row of the chart's table.
type timelineEntry struct {
	Name, Href, Wave, Parent    string
	Started, Finished, HealthAt string
	Phase, Waits                string
	// quiet: Synced and Healthy, sync succeeded; such rows may be folded.
	quiet bool
	ended float64
}

// syncTimeline lays out the chart of m's current or last sync and those
// of the apps under it (of m's own objects when it has no child apps), up
// to now; no view when none has synced.
func syncTimeline(m *member, expand bool, now time.Time) (*timelineView, diagram.Gantt) {
	var members []*member
	origin := time.Time{}
	m.walk(func(mb *member) {
		members = append(members, mb)
		if op := mb.App.Status.OperationState; op != nil && (origin.IsZero() || op.StartedAt.Time.Before(origin)) {
			origin = op.StartedAt.Time
		}
	})
	if origin.IsZero() {
		return nil, diagram.Gantt{}
	}
	v := &timelineView{Origin: origin, Tree: len(members) > 1}
	var rows []diagram.Row
	live := false
	for _, mb := range members {
		row, e := appRow(mb, origin, now)
		rows = append(rows, row)
		v.Rows = append(v.Rows, e)
		live = live || !e.quiet
	}
	if !v.Tree {
		rows = append(rows, objectRows(m.App, origin, now)...)
	} else if len(rows) > timelineFoldAt && !expand {
		rows, v.Folded = foldRows(rows, v.Rows)
	}
	diagram.MarkCriticalPath(rows)
	g := diagram.Gantt{ID: "sync-timeline", Label: "Sync timeline of " + m.App.Name, Rows: rows}
	if v.Tree {
		g.Label += " and its apps"
	}
	if live {
		g.Lines = []diagram.Line{{At: seconds(now, origin), Label: "now"}}
	}
	return v, g
}

// seconds is t as seconds since origin, to the millisecond.
func seconds(t, origin time.Time) float64 {
	return math.Round(t.Sub(origin).Seconds()*1000) / 1000
}

// offset writes t as seconds since origin, "+4.2s"; "" for a zero t.
func offset(t, origin time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "+" + diagram.Duration(seconds(t, origin))
}

// appRow is one app's row: its sync from start to end, then until it
// turned Healthy; the stalled part hatched; its hooks and wave starts as
// marks; what it waits on as the title.
func appRow(mb *member, origin, now time.Time) (diagram.Row, timelineEntry) {
	app := mb.App
	row := diagram.Row{
		ID: app.Name, Label: app.Name, Href: appHref(app.Name, mb.LinkNS), Created: -1,
		Parent: mb.Parent, Wave: int(mb.Wave), DependsOn: application.DependsOn(app),
	}
	e := timelineEntry{Name: app.Name, Href: row.Href, Parent: mb.Parent}
	if mb.Parent != "" {
		row.Label = fmt.Sprintf("%s (wave %d)", app.Name, mb.Wave)
		e.Wave = fmt.Sprint(mb.Wave)
	}
	if c := app.CreationTimestamp.Time; !c.IsZero() && !c.Before(origin) {
		row.Created = seconds(c, origin)
	}
	health, sync := cmp.Or(string(app.Status.Health.Status), "Unknown"), cmp.Or(string(app.Status.Sync.Status), "Unknown")
	notes := []string{app.Name + ": " + sync + " " + health}
	e.Waits = waitsOn(mb)
	op := app.Status.OperationState
	if op == nil {
		e.Phase = "not synced yet"
		row.Title = strings.Join(append(notes, e.Phase, e.Waits), "\n")
		return row, e
	}
	e.Phase, e.Started = string(op.Phase), offset(op.StartedAt.Time, origin)
	start, end := seconds(op.StartedAt.Time, origin), seconds(now, origin)
	if op.FinishedAt != nil {
		end = seconds(op.FinishedAt.Time, origin)
		e.Finished = offset(op.FinishedAt.Time, origin)
	}
	e.ended = end
	notes = append(notes, fmt.Sprintf("sync %s, started %s (%s)", op.Phase, op.StartedAt.Local().Format(time.TimeOnly), e.Started))
	if row.Created >= 0 && start-row.Created >= 1 {
		notes = append(notes, "waited "+diagram.Duration(start-row.Created)+" from its creation "+waitedFor(mb))
	}
	switch op.Phase {
	case v1alpha1.OperationFailed, v1alpha1.OperationError:
		row.Segments = []diagram.Segment{{From: start, To: end, Phase: diagram.Failed}}
	case v1alpha1.OperationSucceeded:
		row.Segments = []diagram.Segment{{From: start, To: end, Phase: diagram.Syncing}}
		healthRow(&row, &e, app, origin, now)
	default:
		row.Segments = runningSegments(&row, app, start, end, origin)
	}
	if e.Finished != "" {
		notes = append(notes, "finished "+e.Finished)
	}
	if e.HealthAt != "" {
		notes = append(notes, "Healthy "+e.HealthAt)
	}
	if h := mb.Hold; h != nil && !h.Own && !h.Since.IsZero() {
		holdSegments(&row, seconds(h.Since, origin), h.text(app.Name))
	}
	row.Marks = append(row.Marks, syncMarks(syncItems(app, op), origin, now)...)
	row.Title = strings.Join(append(notes, e.Waits), "\n")
	e.quiet = op.Phase == v1alpha1.OperationSucceeded && health == "Healthy" && sync == "Synced" && app.Operation == nil
	return row, e
}

// healthRow extends a finished sync's row until the app turned Healthy,
// or to now while it is not.
func healthRow(row *diagram.Row, e *timelineEntry, app *v1alpha1.Application, origin, now time.Time) {
	end := row.Segments[0].To
	if app.Status.Health.Status != "Healthy" {
		row.Segments = append(row.Segments, diagram.Segment{From: end, To: seconds(now, origin), Phase: diagram.Progressing})
		e.ended = seconds(now, origin)
		return
	}
	at := end
	if lt := app.Status.Health.LastTransitionTime; lt != nil {
		at = math.Max(at, seconds(lt.Time, origin))
	}
	if at > end {
		row.Segments = append(row.Segments, diagram.Segment{From: end, To: at, Phase: diagram.Progressing})
	}
	row.Marks = append(row.Marks, diagram.Mark{At: at, Kind: diagram.MarkHealthy, Label: "Healthy at +" + diagram.Duration(at)})
	e.HealthAt, e.ended = "+"+diagram.Duration(at), at
}

// runningSegments is a running sync's bar: syncing, and hatched from the
// time it stalled.
func runningSegments(row *diagram.Row, app *v1alpha1.Application, start, end float64, origin time.Time) []diagram.Segment {
	c := application.Condition(app, v1alpha1.ApplicationConditionSyncStalled)
	if c == nil || c.LastTransitionTime == nil {
		return []diagram.Segment{{From: start, To: end, Phase: diagram.Syncing}}
	}
	at := math.Min(math.Max(seconds(c.LastTransitionTime.Time, origin), start), end)
	row.Marks = append(row.Marks, diagram.Mark{At: at, Kind: diagram.MarkStall, Label: c.Message})
	return []diagram.Segment{{From: start, To: at, Phase: diagram.Syncing}, {From: at, To: end, Phase: diagram.Stalled}}
}

// waitedFor says what an app's sync waited for after the app was created.
func waitedFor(mb *member) string {
	if deps := application.DependsOn(mb.App); len(deps) > 0 {
		return "for its dependencies " + strings.Join(deps, ", ")
	}
	if mb.Parent != "" {
		return fmt.Sprintf("in wave %d of %s", mb.Wave, mb.Parent)
	}
	return "to its sync"
}

// holdSegments hatches a row from the time its parent's wave stalled on
// it.
func holdSegments(row *diagram.Row, at float64, why string) {
	n := len(row.Segments)
	if n == 0 || row.Segments[n-1].To <= at {
		return
	}
	last := &row.Segments[n-1]
	from := math.Max(at, last.From)
	stalled := diagram.Segment{From: from, To: last.To, Phase: diagram.Stalled}
	if last.To = from; last.To <= last.From {
		row.Segments = row.Segments[:n-1]
	}
	row.Segments = append(row.Segments, stalled)
	row.Marks = append(row.Marks, diagram.Mark{At: from, Kind: diagram.MarkStall, Label: why})
}

// waitsOn says what the app waits on: the stall that holds it, the
// running sync's wait, its dependencies, or why its sync failed; ""
// when nothing.
func waitsOn(mb *member) string {
	if mb.Hold != nil {
		return "stalled: " + mb.Hold.text(mb.App.Name)
	}
	app := mb.App
	op := app.Status.OperationState
	if op != nil && (op.Phase == v1alpha1.OperationRunning || op.Phase == v1alpha1.OperationTerminating) && op.Message != "" {
		return op.Message
	}
	if c := application.Condition(app, v1alpha1.ApplicationConditionDependencyWait); c != nil {
		return c.Message
	}
	if op != nil && (op.Phase == v1alpha1.OperationFailed || op.Phase == v1alpha1.OperationError) {
		return op.Message
	}
	return ""
}

// syncMarks are a sync's hooks (from creation to end) and, when its
// objects span several waves, the start of each wave.
func syncMarks(items []syncItem, origin, now time.Time) []diagram.Mark {
	var marks []diagram.Mark
	waveStart := map[int64]time.Time{}
	for _, it := range items {
		if it.StartedAt.IsZero() {
			continue
		}
		if !it.Hook {
			if s, ok := waveStart[it.Wave]; it.Phase == "Sync" && (!ok || it.StartedAt.Before(s)) {
				waveStart[it.Wave] = it.StartedAt
			}
			continue
		}
		end := it.FinishedAt
		if end.IsZero() {
			end = now
		}
		label := fmt.Sprintf("%s hook %s %s: %s, %s to %s", it.HookType, it.Kind, qualified(it.Namespace, it.Name),
			cmp.Or(it.HookPhase, it.Status), offset(it.StartedAt, origin), offset(end, origin))
		marks = append(marks, diagram.Mark{At: seconds(it.StartedAt, origin), Until: seconds(end, origin), Kind: diagram.MarkHook, Label: label})
	}
	if len(waveStart) > 1 {
		for _, w := range slices.Sorted(maps.Keys(waveStart)) {
			marks = append(marks, diagram.Mark{At: seconds(waveStart[w], origin), Kind: diagram.MarkWave,
				Label: fmt.Sprintf("wave %d starts %s", w, offset(waveStart[w], origin))})
		}
	}
	return marks
}

// objectRows are an app's objects in its sync: each from its apply to
// the time it was Healthy.
func objectRows(app *v1alpha1.Application, origin, now time.Time) []diagram.Row {
	var rows []diagram.Row
	for _, it := range syncItems(app, app.Status.OperationState) {
		if it.Hook || it.StartedAt.IsZero() || len(rows) == maxObjectRows {
			continue
		}
		seg := diagram.Segment{From: seconds(it.StartedAt, origin), To: seconds(now, origin), Phase: diagram.Waiting}
		if !it.FinishedAt.IsZero() {
			seg.To, seg.Phase = seconds(it.FinishedAt, origin), diagram.Settled
		}
		if it.Status == string(v1alpha1.ResultCodeSyncFailed) || it.Status == string(v1alpha1.TaskFailed) {
			seg.Phase = diagram.Failed
		}
		title := fmt.Sprintf("%s %s: %s, applied %s", it.Kind, qualified(it.Namespace, it.Name), it.Status, offset(it.StartedAt, origin))
		if !it.FinishedAt.IsZero() {
			title += ", done " + offset(it.FinishedAt, origin)
		}
		rows = append(rows, diagram.Row{
			ID: fmt.Sprintf("%s/%s/%s", it.Kind, it.Namespace, it.Name), Label: fmt.Sprintf("%s %s (wave %d)", kindIcon(it.Kind), it.Name, it.Wave),
			Title: strings.TrimSuffix(title+"\n"+it.Message, "\n"), Created: -1, Parent: app.Name, Wave: int(it.Wave),
			Segments: []diagram.Segment{seg},
		})
	}
	return rows
}

// foldRows folds the quiet apps of each parent's wave into one row, when
// at least three are; it returns the rows and how many apps it folded.
func foldRows(rows []diagram.Row, entries []timelineEntry) ([]diagram.Row, int) {
	type group struct {
		first int
		idx   []int
	}
	groups := map[string]*group{}
	for i := range rows {
		if !entries[i].quiet || rows[i].Parent == "" {
			continue
		}
		key := fmt.Sprintf("%s/%d", rows[i].Parent, rows[i].Wave)
		if groups[key] == nil {
			groups[key] = &group{first: i}
		}
		groups[key].idx = append(groups[key].idx, i)
	}
	folded, skip := 0, map[int]bool{}
	replace := map[int]diagram.Row{}
	for key, g := range groups {
		if len(g.idx) < 3 {
			continue
		}
		from, to := math.Inf(1), 0.0
		var names []string
		for _, i := range g.idx {
			skip[i] = true
			from = math.Min(from, rows[i].Segments[0].From)
			to = math.Max(to, entries[i].ended)
			names = append(names, rows[i].ID)
		}
		first := rows[g.first]
		replace[g.first] = diagram.Row{
			ID: "wave:" + key, Label: fmt.Sprintf("%d apps (wave %d)", len(g.idx), first.Wave), Created: -1,
			Title: fmt.Sprintf("%d apps of wave %d under %s, Synced and Healthy: first sync +%s, last Healthy +%s: %s",
				len(g.idx), first.Wave, first.Parent, diagram.Duration(from), diagram.Duration(to), strings.Join(names, ", ")),
			Parent: first.Parent, Wave: first.Wave, Segments: []diagram.Segment{{From: from, To: to, Phase: diagram.Settled}},
		}
		folded += len(g.idx)
	}
	var out []diagram.Row
	for i := range rows {
		if r, ok := replace[i]; ok {
			out = append(out, r)
		} else if !skip[i] {
			out = append(out, rows[i])
		}
	}
	return out, folded
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// appHref is the page of app name; ns, when set, is its namespace (an app
// outside the control namespace).
func appHref(name, ns string) string { return appURL(name, ns, nil) }

// appURL is the page of app name in namespace ns ("": the control
// namespace) with query q.
func appURL(name, ns string, q url.Values) string {
	if ns != "" {
		if q == nil {
			q = url.Values{}
		}
		q.Set("appNamespace", ns)
	}
	if len(q) == 0 {
		return "/applications/" + url.PathEscape(name)
	}
	return "/applications/" + url.PathEscape(name) + "?" + q.Encode()
}
