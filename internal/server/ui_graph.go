package server

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/diagram"
)

// graphFoldAt is how many apps a graph shows one by one: beyond it, the
// apps of a wave that are Synced and Healthy with nothing to say fold
// into one node per ApplicationSet (or parent); ?expand=all unfolds them.
const graphFoldAt = 60

// graphView is the app-of-apps graph of a root and its table.
type graphView struct {
	SVG  template.HTML
	Rows []graphRow
	// Folded counts the apps folded into group nodes.
	Folded int
}

// graphRow is one app in the graph's table: the text alternative.
type graphRow struct {
	Name, Href, Parent, Set, Wave, Column string
	DependsOn, Health, Sync, Operation    string
	Waits                                 string
	Stalled                               bool
}

// appGraph lays out the apps under m by wave, left to right, and their
// table; no view when m has no child apps.
func appGraph(m *member, expand bool) (diagram.Graph, *graphView) {
	if len(m.Children) == 0 {
		return diagram.Graph{}, nil
	}
	var members []*member
	m.walk(func(mb *member) { members = append(members, mb) })
	cols := columnsOf(members)
	v := &graphView{}
	g := diagram.Graph{ID: "app-graph", Label: "Apps under " + m.App.Name + " by wave"}
	nodes := make([][]diagram.Node, maxColumn(cols)+1)
	groupOf := map[string]string{}
	fold := len(members) > graphFoldAt && !expand
	groups := map[string]*appGroup{}
	for _, mb := range members {
		c := cols[mb.App.Name]
		v.Rows = append(v.Rows, newGraphRow(mb, c))
		if key := groupKey(mb, c); fold && key != "" {
			if groups[key] == nil {
				groups[key] = &appGroup{key: key, column: c, member: mb}
			}
			groups[key].names = append(groups[key].names, mb.App.Name)
			continue
		}
		nodes[c] = append(nodes[c], appNode(mb))
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		gr := groups[key]
		if len(gr.names) < 3 { // too few to fold: show them
			for _, name := range gr.names {
				nodes[gr.column] = append(nodes[gr.column], appNode(memberNamed(members, name)))
			}
			continue
		}
		for _, name := range gr.names {
			groupOf[name] = "group:" + key
		}
		nodes[gr.column] = append(nodes[gr.column], gr.node())
		v.Folded += len(gr.names)
	}
	for c := range nodes {
		g.Columns = append(g.Columns, diagram.Column{Label: columnLabel(members, cols, c), Nodes: nodes[c]})
	}
	g.Edges = graphEdges(members, groupOf)
	g.Desc = graphDesc(m, members, len(g.Columns))
	return g, v
}

// columnsOf places each app in a column: the root in the first; the
// children of an app right of it, one column per wave of its children;
// an app right of every app it depends on.
func columnsOf(members []*member) map[string]int {
	cols := map[string]int{}
	raise := func(name string, col int) bool {
		if c, ok := cols[name]; ok && c >= col || col >= len(members) { // the bound stops depends-on cycles
			return false
		}
		cols[name] = col
		return true
	}
	for range members { // each pass settles at least one more app
		changed := false
		for _, mb := range members { // parents come before their children
			if mb.Parent == "" {
				changed = raise(mb.App.Name, 0) || changed
			}
			var waves []int64
			for _, c := range mb.Children {
				if !slices.Contains(waves, c.Wave) {
					waves = append(waves, c.Wave)
				}
			}
			slices.Sort(waves)
			for _, c := range mb.Children {
				changed = raise(c.App.Name, cols[mb.App.Name]+1+slices.Index(waves, c.Wave)) || changed
			}
			for _, d := range application.DependsOn(mb.App) {
				if dc, ok := cols[d]; ok && d != mb.App.Name {
					changed = raise(mb.App.Name, dc+1) || changed
				}
			}
		}
		if !changed {
			break
		}
	}
	return cols
}

func maxColumn(cols map[string]int) int {
	n := 0
	for _, c := range cols {
		n = max(n, c)
	}
	return n
}

// columnLabel names a column by the waves of its apps.
func columnLabel(members []*member, cols map[string]int, c int) string {
	var waves []int64
	for _, mb := range members {
		if cols[mb.App.Name] == c {
			if mb.Parent == "" {
				return "root"
			}
			if !slices.Contains(waves, mb.Wave) {
				waves = append(waves, mb.Wave)
			}
		}
	}
	slices.Sort(waves)
	var parts []string
	for _, w := range waves {
		parts = append(parts, fmt.Sprint(w))
	}
	if len(parts) == 1 {
		return "wave " + parts[0]
	}
	return "waves " + strings.Join(parts, ", ")
}

// appStatus is what a node and a table row say of an app.
type appStatus struct {
	health, sync, op, waits string
	stalled                 bool
}

func appStatusOf(mb *member) appStatus {
	app := mb.App
	s := appStatus{
		health: cmp.Or(string(app.Status.Health.Status), "Unknown"), sync: cmp.Or(string(app.Status.Sync.Status), "Unknown"),
		waits: waitsOn(mb), stalled: mb.Hold != nil,
	}
	if op := app.Status.OperationState; op != nil && (app.Operation != nil || !op.Phase.Completed()) {
		s.op = "Syncing"
	} else if op != nil && (op.Phase == v1alpha1.OperationFailed || op.Phase == v1alpha1.OperationError) {
		s.op = "Sync failed"
	}
	return s
}

// quiet reports an app with nothing to say: Synced and Healthy, no sync
// running or failed, no wait.
func (s appStatus) quiet() bool {
	return s.health == "Healthy" && s.sync == "Synced" && s.op == "" && s.waits == "" && !s.stalled
}

// appNode is one app's box: wave, health, sync, a running or failed sync,
// and what it waits on or why it stalled.
func appNode(mb *member) diagram.Node {
	st := appStatusOf(mb)
	n := diagram.Node{ID: mb.App.Name, Kind: "app", Name: mb.App.Name, Href: appHref(mb.App.Name, mb.LinkNS), Class: "h-" + st.health}
	if mb.Parent != "" {
		n.Badges = append(n.Badges, diagram.Badge{Text: fmt.Sprintf("wave %d", mb.Wave)})
	}
	n.Badges = append(n.Badges, diagram.Badge{Text: st.health, Class: "h-" + st.health}, diagram.Badge{Text: st.sync, Class: "s-" + st.sync})
	switch {
	case st.stalled:
		n.Class += " stalled"
		n.Badges = append(n.Badges, diagram.Badge{Text: "stalled", Class: "stalled"})
	case st.op == "Syncing":
		n.Badges = append(n.Badges, diagram.Badge{Text: "Syncing", Class: "op-Running"})
	case st.op != "":
		n.Badges = append(n.Badges, diagram.Badge{Text: st.op, Class: "op-Failed"})
	}
	switch {
	case st.stalled:
		// The badge says stalled and the node is the app: the lines keep
		// the wave, what it waits on and the scheduler's reason.
		n.Lines, n.MaxLines = []string{mb.Hold.text(mb.App.Name)}, 6
	case st.waits != "":
		n.Class += " waiting"
		n.Lines = []string{st.waits}
	}
	label := []string{"Application " + mb.App.Name}
	if mb.Parent != "" {
		label = append(label, fmt.Sprintf("wave %d of %s", mb.Wave, mb.Parent))
	}
	label = append(label, st.health, st.sync)
	if st.op != "" {
		label = append(label, st.op)
	}
	if st.waits != "" {
		label = append(label, st.waits)
	}
	n.Label = strings.Join(label, ", ")
	return n
}

func newGraphRow(mb *member, col int) graphRow {
	st := appStatusOf(mb)
	r := graphRow{
		Name: mb.App.Name, Href: appHref(mb.App.Name, mb.LinkNS), Parent: mb.Parent, Set: mb.Set, Column: fmt.Sprint(col + 1),
		DependsOn: strings.Join(application.DependsOn(mb.App), ", "), Health: st.health, Sync: st.sync, Operation: st.op,
		Waits: st.waits, Stalled: st.stalled,
	}
	if mb.Parent != "" {
		r.Wave = fmt.Sprint(mb.Wave)
	}
	return r
}

// appGroup is quiet apps of one column under one set or parent, folded.
type appGroup struct {
	key    string
	column int
	member *member
	names  []string
}

// groupKey is the group a quiet app may fold into; "" when it has
// something to say or is the root.
func groupKey(mb *member, col int) string {
	if mb.Parent == "" || !appStatusOf(mb).quiet() || len(mb.Children) > 0 {
		return ""
	}
	return fmt.Sprintf("%d-%s-%s", col, mb.Parent, mb.Set)
}

func (g *appGroup) node() diagram.Node {
	owner := g.member.Parent
	if g.member.Set != "" {
		owner = g.member.Set
	}
	shown := g.names[:min(len(g.names), 4)]
	more := ""
	if len(g.names) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(g.names)-len(shown))
	}
	return diagram.Node{
		ID: "group:" + g.key, Kind: "apps", Name: fmt.Sprintf("%s: %d apps", owner, len(g.names)), Class: "group h-Healthy",
		Href: "?expand=all", Badges: []diagram.Badge{{Text: fmt.Sprintf("wave %d", g.member.Wave)}, {Text: fmt.Sprintf("%d Healthy, Synced", len(g.names)), Class: "h-Healthy"}},
		Lines: []string{strings.Join(shown, ", ") + more},
		Label: fmt.Sprintf("%d apps of %s in wave %d, all Synced and Healthy: %s. Show them one by one.", len(g.names), owner, g.member.Wave, strings.Join(g.names, ", ")),
	}
}

func memberNamed(members []*member, name string) *member {
	for _, mb := range members {
		if mb.App.Name == name {
			return mb
		}
	}
	return nil
}

// graphEdges joins parents to children and dependencies to dependents;
// an edge to or from a folded app goes to its group, once.
func graphEdges(members []*member, groupOf map[string]string) []diagram.Edge {
	node := func(name string) string { return cmp.Or(groupOf[name], name) }
	in := map[string]bool{}
	for _, mb := range members {
		in[mb.App.Name] = true
	}
	seen := map[diagram.Edge]bool{}
	var out []diagram.Edge
	add := func(e diagram.Edge) {
		if e.From != e.To && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	for _, mb := range members {
		if mb.Parent != "" {
			label := mb.Parent + " → " + mb.App.Name
			if mb.Set != "" {
				label += " (through ApplicationSet " + mb.Set + ")"
			}
			if groupOf[mb.App.Name] != "" {
				label = ""
			}
			add(diagram.Edge{From: node(mb.Parent), To: node(mb.App.Name), Kind: diagram.Parent, Label: label})
		}
		for _, d := range application.DependsOn(mb.App) {
			if in[d] {
				add(diagram.Edge{From: node(d), To: node(mb.App.Name), Kind: diagram.DependsOn, Label: mb.App.Name + " depends on " + d})
			}
		}
	}
	return out
}

// graphDesc summarizes the graph in a sentence: its text alternative.
func graphDesc(m *member, members []*member, columns int) string {
	counts := map[string]int{}
	var stalled []string
	for _, mb := range members[1:] {
		st := appStatusOf(mb)
		counts[st.health]++
		if st.stalled {
			stalled = append(stalled, mb.App.Name)
		}
	}
	var parts []string
	for _, h := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[h], h))
	}
	s := fmt.Sprintf("%s and %d apps under it in %d columns: %s.", m.App.Name, len(members)-1, columns, strings.Join(parts, ", "))
	if len(stalled) > 0 {
		s += " Stalled: " + strings.Join(stalled, ", ") + "."
	}
	return s
}
