package server

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
)

// templateFuncs are the helpers the templates use.
var templateFuncs = template.FuncMap{
	"short": func(s string) string {
		if len(s) > 7 && !strings.ContainsAny(s, "/.") {
			return s[:7]
		}
		return s
	},
	"ago":      ago,
	"time":     func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"lower":    strings.ToLower,
	"kindIcon": kindIcon,
}

// kindIcons are the short names drawn in a node's icon.
var kindIcons = map[string]string{
	"Application": "app", "Deployment": "deploy", "StatefulSet": "sts", "DaemonSet": "ds", "ReplicaSet": "rs",
	"Pod": "pod", "Service": "svc", "ConfigMap": "cm", "Secret": "sec", "Job": "job", "CronJob": "cj",
	"Namespace": "ns", "Ingress": "ing", "PersistentVolumeClaim": "pvc", "ServiceAccount": "sa",
}

func kindIcon(kind string) string {
	if s, ok := kindIcons[kind]; ok {
		return s
	}
	var b strings.Builder
	for _, r := range kind {
		if r >= 'A' && r <= 'Z' {
			b.WriteRune(r + 'a' - 'A')
		}
	}
	return b.String()
}

// ago is a rough "3m ago".
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// appCard is one app of the list page.
type appCard struct {
	Name, Project, Health, HealthMessage, Sync string
	// Namespace is the app's namespace outside the control namespace
	// ("" in it); Title is how the app is named: NAMESPACE/NAME there.
	Namespace, Title                          string
	Repo, Path, Target, Destination, Revision string
	OpPhase, OpMessage                        string
	Automated                                 bool
}

func newAppCard(app *v1alpha1.Application) appCard {
	c := appCard{
		Name: app.Name, Title: app.Name, Project: app.Spec.Project,
		Health: cmp.Or(string(app.Status.Health.Status), "Unknown"), HealthMessage: app.Status.Health.Message,
		Sync: cmp.Or(string(app.Status.Sync.Status), "Unknown"), Revision: app.Status.Sync.Revision,
		Destination: destination(app), Automated: app.Spec.SyncPolicy.IsAutomated(),
	}
	if src := app.Spec.GetSources(); len(src) > 0 {
		c.Repo, c.Path, c.Target = src[0].RepoURL, cmp.Or(src[0].Path, src[0].Chart), cmp.Or(src[0].TargetRevision, "HEAD")
	}
	if op := app.Status.OperationState; op != nil && (app.Operation != nil || op.Phase == v1alpha1.OperationRunning) {
		c.OpPhase, c.OpMessage = string(op.Phase), op.Message
	} else if app.Operation != nil {
		c.OpPhase = "Pending"
	}
	return c
}

// Href is the app's page.
func (c appCard) Href() string { return appHref(c.Name, c.Namespace) }

// inNamespace sets the card's namespace: linkNS, the app's namespace
// outside the control namespace ("" in it).
func (c appCard) inNamespace(linkNS string) appCard {
	c.Namespace = linkNS
	if linkNS != "" {
		c.Title = linkNS + "/" + c.Name
	}
	return c
}

func destination(app *v1alpha1.Application) string {
	d := app.Spec.Destination
	cluster := cmp.Or(d.Name, d.Server)
	if cluster == "https://kubernetes.default.svc" {
		cluster = "in-cluster"
	}
	return cluster + "/" + d.Namespace
}

// treeNode is one node of the resource tree as the app page draws it.
type treeNode struct {
	appclient.ResourceNode
	HealthCode string
	Children   []*treeNode
	IsApp      bool
}

// treeRoots turns the flat node list into nested nodes; a node whose
// parent is not in the list becomes a root.
func treeRoots(tree *appclient.ApplicationTree) []*treeNode {
	type key struct{ group, kind, namespace, name string }
	byKey := map[key]*treeNode{}
	nodes := make([]*treeNode, len(tree.Nodes))
	for i, n := range tree.Nodes {
		tn := &treeNode{ResourceNode: n, IsApp: application.IsApplication(n.Group, n.Kind)}
		if n.Health != nil {
			tn.HealthCode = string(n.Health.Status)
		}
		nodes[i] = tn
		byKey[key{n.Group, n.Kind, n.Namespace, n.Name}] = tn
	}
	var roots []*treeNode
	for _, n := range nodes {
		var parent *treeNode
		if len(n.ParentRefs) > 0 {
			p := n.ParentRefs[0]
			parent = byKey[key{p.Group, p.Kind, p.Namespace, p.Name}]
		}
		if parent == nil || parent == n {
			roots = append(roots, n)
			continue
		}
		parent.Children = append(parent.Children, n)
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].SyncWave < roots[j].SyncWave })
	return roots
}

// waveView is one sync wave of the app's managed objects.
type waveView struct {
	Wave      int64
	Resources []waveResource
	// State is "done", "current" or "pending" while a sync runs; empty
	// otherwise.
	State string
	// Waiting is what the current wave waits on (operationState.message).
	Waiting string
}

type waveResource struct {
	Kind, Name, Health, Sync string
}

// waves groups the app's objects by wave and marks the wave a running
// sync is at.
func waves(app *v1alpha1.Application) []waveView {
	byWave := map[int64]*waveView{}
	for _, r := range app.Status.Resources {
		if r.Hook {
			continue
		}
		w := byWave[r.SyncWave]
		if w == nil {
			w = &waveView{Wave: r.SyncWave}
			byWave[r.SyncWave] = w
		}
		h := ""
		if r.Health != nil {
			h = string(r.Health.Status)
		}
		w.Resources = append(w.Resources, waveResource{Kind: r.Kind, Name: r.Name, Health: h, Sync: string(r.Status)})
	}
	out := make([]waveView, 0, len(byWave))
	for _, w := range byWave {
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Wave < out[j].Wave })
	op := app.Status.OperationState
	if op == nil || op.Phase != v1alpha1.OperationRunning {
		return out
	}
	st := application.ProgressOf(op)
	for i := range out {
		switch {
		case st == nil:
		case st.SyncPhase != v1alpha1.SyncPhaseSync:
			out[i].State = "pending"
		case int(out[i].Wave) < st.Wave:
			out[i].State = "done"
		case int(out[i].Wave) == st.Wave:
			out[i].State, out[i].Waiting = "current", op.Message
		default:
			out[i].State = "pending"
		}
	}
	return out
}

// timelineRow is one object of the last sync.
type timelineRow struct {
	Wave                                 int64
	Phase, Kind, Namespace, Name, Status string
	HookPhase, Message                   string
	// At is when a child Application last changed health (its
	// lastTransitionTime), as an offset from the sync's start.
	At string
}

// operationView summarizes the current or last operation.
type operationView struct {
	Phase, Message, InitiatedBy, Revision string
	StartedAt                             time.Time
	FinishedAt                            time.Time
	Duration                              string
	Running, DryRun                       bool
	Rows                                  []timelineRow
}

func newOperationView(t *appclient.AppTree) *operationView {
	app := t.App
	op := app.Status.OperationState
	if op == nil {
		return nil
	}
	v := &operationView{
		Phase: string(op.Phase), Message: op.Message, StartedAt: op.StartedAt.Time,
		Running: !op.Phase.Completed(), InitiatedBy: op.Operation.InitiatedBy.Username,
	}
	if op.Operation.InitiatedBy.Automated {
		v.InitiatedBy = "automated sync"
	}
	if op.Operation.Sync != nil {
		v.DryRun = op.Operation.Sync.DryRun
	}
	if op.FinishedAt != nil {
		v.FinishedAt = op.FinishedAt.Time
		v.Duration = op.FinishedAt.Sub(op.StartedAt.Time).Round(time.Second).String()
	}
	if op.SyncResult != nil {
		v.Revision = op.SyncResult.Revision
	}
	v.Rows = timelineRows(t, op)
	return v
}

func timelineRows(t *appclient.AppTree, op *v1alpha1.OperationState) []timelineRow {
	var rows []timelineRow
	for _, it := range syncItems(t.App, op) {
		rows = append(rows, timelineRow{
			Wave: it.Wave, Phase: it.Phase, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name,
			Status: it.Status, HookPhase: it.HookPhase, Message: it.Message,
		})
	}
	for i := range rows {
		if child, ok := t.Children[rows[i].Name]; ok && rows[i].Kind == v1alpha1.ApplicationKind {
			if lt := child.App.Status.Health.LastTransitionTime; lt != nil && !lt.Before(&op.StartedAt) {
				rows[i].At = "+" + lt.Sub(op.StartedAt.Time).Round(time.Second).String() + " " + string(child.App.Status.Health.Status)
			}
		}
	}
	phaseOrder := map[string]int{"PreSync": 0, "Sync": 1, "PostSync": 2, "SyncFail": 3}
	slices.SortStableFunc(rows, func(a, b timelineRow) int {
		if d := phaseOrder[a.Phase] - phaseOrder[b.Phase]; d != 0 {
			return d
		}
		return int(a.Wave - b.Wave)
	})
	return rows
}

// historyRow is one deployment of the history.
type historyRow struct {
	ID                                 int64
	Revision, Source, InitiatedBy, Ago string
	DeployedAt                         time.Time
	Latest                             bool
}

func historyRows(app *v1alpha1.Application) []historyRow {
	h := app.Status.History
	out := make([]historyRow, 0, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		e := h[i]
		src := e.Source
		if len(e.Sources) > 0 {
			src = e.Sources[0]
		}
		rev := e.Revision
		if len(e.Revisions) > 0 {
			rev = strings.Join(e.Revisions, ", ")
		}
		out = append(out, historyRow{
			ID: e.ID, Revision: rev, Source: strings.TrimSuffix(src.RepoURL+" "+cmp.Or(src.Path, src.Chart), " "),
			InitiatedBy: e.InitiatedBy.Username, DeployedAt: e.DeployedAt.Time, Ago: ago(e.DeployedAt.Time), Latest: i == len(h)-1,
		})
	}
	return out
}

// maxEventRows is how many of an app's events its page shows.
const maxEventRows = 20

// eventRow is one Kubernetes event of the app.
type eventRow struct {
	Type, Reason, Message, Ago string
	Count                      int32
	Last                       time.Time
}

// eventRows returns the newest events first, at most limit of them.
func eventRows(events []corev1.Event, limit int) []eventRow {
	out := make([]eventRow, 0, len(events))
	for _, e := range events {
		last := eventTime(e)
		count := e.Count
		if e.Series != nil {
			count = max(count, e.Series.Count)
		}
		out = append(out, eventRow{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(count, 1), Last: last, Ago: ago(last)})
	}
	slices.SortStableFunc(out, func(a, b eventRow) int { return b.Last.Compare(a.Last) })
	return out[:min(len(out), limit)]
}

// eventTime is when the event was last seen, whichever API recorded it.
func eventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// syncResource is one object the sync dialog offers.
type syncResource struct {
	Group, Kind, Namespace, Name, Sync string
}

func syncResources(app *v1alpha1.Application) []syncResource {
	var out []syncResource
	for _, r := range app.Status.Resources {
		if !r.Hook {
			out = append(out, syncResource{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Sync: string(r.Status)})
		}
	}
	return out
}
