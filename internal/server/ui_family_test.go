package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/diagram"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/testenv"
)

// familyCase is one case of testdata/family: apps as listed, the root,
// and the tree, graph and timeline wanted, each written compactly.
type familyCase struct {
	Root string                 `json:"root"`
	Now  time.Time              `json:"now"`
	Apps []v1alpha1.Application `json:"apps"`
	Want struct {
		Members  []string `json:"members"`
		Graph    []string `json:"graph"`
		Edges    []string `json:"edges"`
		Timeline []string `json:"timeline"`
		Lines    []string `json:"lines"`
		// Waits is what the graph says each app waits on, when set.
		Waits map[string]string `json:"waits"`
		// Titles are lines of timeline rows' hover text, by row.
		Titles map[string][]string `json:"titles"`
	} `json:"want"`
}

// TestFamilyPictures reads each case's apps into a tree and checks where
// each app sits, the graph's columns and edges, and the timeline's rows.
func TestFamilyPictures(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "family") {
		t.Run(name, func(t *testing.T) {
			var tc familyCase
			if err := yaml.UnmarshalStrict(b, &tc); err != nil {
				t.Fatal(err)
			}
			m := newFamily(tc.Apps, "").tree(tc.Root)
			if m == nil {
				t.Fatalf("no tree for %s", tc.Root)
			}
			var members []string
			m.walk(func(mb *member) { members = append(members, memberText(mb)) })
			opts := cmpopts.EquateEmpty()
			if diff := cmp.Diff(tc.Want.Members, members, opts); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			graph, edges := graphText(t, m)
			if diff := cmp.Diff(tc.Want.Graph, graph, opts); diff != "" {
				t.Errorf("graph columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Want.Edges, edges, opts); diff != "" {
				t.Errorf("graph edges (-want +got):\n%s", diff)
			}
			for name, want := range tc.Want.Waits {
				var got string
				m.walk(func(mb *member) {
					if mb.App.Name == name {
						got = appNode(mb).Lines[0]
					}
				})
				if got != want {
					t.Errorf("%s's node says %q, want %q", name, got, want)
				}
			}
			if len(tc.Want.Titles) > 0 {
				_, g := syncTimeline(m, false, tc.Now)
				for _, r := range g.Rows {
					for _, want := range tc.Want.Titles[r.ID] {
						if !slices.Contains(strings.Split(r.Title, "\n"), want) {
							t.Errorf("row %s's title %q lacks the line %q", r.ID, r.Title, want)
						}
					}
				}
			}
			rows, lines := timelineText(m, tc.Now)
			if diff := cmp.Diff(tc.Want.Timeline, rows, opts); diff != "" {
				t.Errorf("timeline rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Want.Lines, lines, opts); diff != "" {
				t.Errorf("timeline lines (-want +got):\n%s", diff)
			}
		})
	}
}

func memberText(mb *member) string {
	s := mb.App.Name
	if mb.Parent != "" {
		s += " parent=" + mb.Parent
	}
	if mb.Set != "" {
		s += " set=" + mb.Set
	}
	if mb.Parent != "" {
		s += fmt.Sprintf(" wave=%d", mb.Wave)
	}
	return s + fmt.Sprintf(" depth=%d", mb.Depth)
}

// graphText is the graph as "label: node(class) ..." per column and
// "from -> to kind" per edge; nil when there is no graph.
func graphText(t *testing.T, m *member) (cols, edges []string) {
	t.Helper()
	g, v := appGraph(m, false)
	if v == nil {
		return nil, nil
	}
	for _, c := range g.Columns {
		var nodes []string
		for _, n := range c.Nodes {
			nodes = append(nodes, fmt.Sprintf("%s(%s)", n.ID, n.Class))
		}
		cols = append(cols, c.Label+": "+strings.Join(nodes, " "))
	}
	for _, e := range g.Edges {
		edges = append(edges, fmt.Sprintf("%s -> %s %s", e.From, e.To, e.Kind))
	}
	return cols, edges
}

// timelineText is each row as "label: segments, marks [critical]".
func timelineText(m *member, now time.Time) (rows, lines []string) {
	v, g := syncTimeline(m, false, now)
	if v == nil {
		return nil, nil
	}
	num := func(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.3g", f), ".0") }
	for _, r := range g.Rows {
		var parts []string
		if r.Created >= 0 {
			parts = append(parts, "created "+num(r.Created))
		}
		for _, s := range r.Segments {
			parts = append(parts, fmt.Sprintf("%s %s-%s", s.Phase, num(s.From), num(s.To)))
		}
		for _, mk := range r.Marks {
			p := fmt.Sprintf("%s@%s", mk.Kind, num(mk.At))
			if mk.Until > mk.At {
				p += "-" + num(mk.Until)
			}
			parts = append(parts, p)
		}
		s := r.Label + ": " + strings.Join(parts, ", ")
		if r.Critical {
			s += " critical"
		}
		rows = append(rows, strings.TrimSuffix(s, ": "))
	}
	for _, l := range g.Lines {
		lines = append(lines, l.Label+"@"+num(l.At))
	}
	return rows, lines
}

// TestGraphFoldsQuietApps draws 80 apps in two waves: past 60 the quiet
// apps of a wave fold into one node per ApplicationSet, while the stalled
// and the waiting app stay on their own, and ?expand=all unfolds.
func TestGraphFoldsQuietApps(t *testing.T) {
	apps := []v1alpha1.Application{{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "argocd"},
		Status: v1alpha1.ApplicationStatus{Resources: []v1alpha1.ResourceStatus{
			{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationSetKind, Namespace: "argocd", Name: "fleet"},
		}},
	}}
	for i := range 80 {
		app := v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("app-%02d", i), Namespace: "argocd", Annotations: map[string]string{hook.AnnotationSyncWave: fmt.Sprint(i % 2)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "ApplicationSet", Name: "fleet", Controller: ptr.To(true)}},
		}}
		app.Status.Health.Status, app.Status.Sync.Status = "Healthy", "Synced"
		apps = append(apps, app)
	}
	apps[5].Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionSyncStalled, Message: "stalled: no node"}}
	apps[8].Status.Health.Status = "Progressing"
	m := newFamily(apps, "").tree("root")

	g, v := appGraph(m, false)
	var got []string
	for _, c := range g.Columns {
		var ids []string
		for _, n := range c.Nodes {
			ids = append(ids, n.ID)
		}
		got = append(got, c.Label+": "+strings.Join(ids, " "))
	}
	want := []string{"root: root", "wave 0: app-04 group:1-root-fleet", "wave 1: app-07 group:2-root-fleet"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("folded columns (-want +got):\n%s", diff)
	}
	if v.Folded != 78 || len(v.Rows) != 81 {
		t.Errorf("folded %d apps, %d table rows; want 78 and every app in the table (81)", v.Folded, len(v.Rows))
	}
	if n := g.Columns[1].Nodes[1]; n.Name != "fleet: 39 apps" || !strings.Contains(n.Label, "app-00, app-02") {
		t.Errorf("group node %+v", n)
	}
	edges := 0
	for _, e := range g.Edges {
		if e.From == "root" {
			edges++
		}
	}
	if edges != 4 {
		t.Errorf("%d edges from the root, want one to each group and each app shown: %+v", edges, g.Edges)
	}
	unfolded, _ := appGraph(m, true)
	if n := len(unfolded.Columns[1].Nodes) + len(unfolded.Columns[2].Nodes); n != 80 {
		t.Errorf("unfolded graph shows %d apps, want 80", n)
	}
	if !slices.ContainsFunc(g.Columns[1].Nodes, func(n diagram.Node) bool { return strings.Contains(n.Class, "stalled") }) {
		t.Errorf("the stalled app does not stand out: %+v", g.Columns[1].Nodes)
	}
}

// TestResourceGraph lays out each tree of testdata/resgraph and checks
// the columns (kinds, then nodes) and the edges.
func TestResourceGraph(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "resgraph") {
		t.Run(name, func(t *testing.T) {
			var tc struct {
				App   string                   `json:"app"`
				Nodes []appclient.ResourceNode `json:"nodes"`
				Want  struct {
					Columns []string `json:"columns"`
					Edges   []string `json:"edges"`
				} `json:"want"`
			}
			if err := yaml.UnmarshalStrict(b, &tc); err != nil {
				t.Fatal(err)
			}
			g, left := resourceGraph(&appclient.ApplicationTree{Nodes: tc.Nodes}, tc.App, "")
			var cols, edges []string
			for _, c := range g.Columns {
				var nodes []string
				for _, n := range c.Nodes {
					nodes = append(nodes, n.Kind+" "+n.Name)
				}
				cols = append(cols, c.Label+": "+strings.Join(nodes, ", "))
			}
			for _, e := range g.Edges {
				edges = append(edges, fmt.Sprintf("%s -> %s %s", e.From, e.To, e.Kind))
			}
			if diff := cmp.Diff(tc.Want.Columns, cols); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Want.Edges, edges); diff != "" {
				t.Errorf("edges (-want +got):\n%s", diff)
			}
			if left != 0 {
				t.Errorf("%d objects left out", left)
			}
		})
	}
}
