package diagram

import (
	"cmp"
	"fmt"
	"math"
	"strings"
)

// EdgeKind is how an edge is drawn.
type EdgeKind string

// The edge kinds.
const (
	// Parent joins a parent to its child: solid.
	Parent EdgeKind = "parent"
	// DependsOn joins a dependency to its dependent: dashed, with an arrow.
	DependsOn EdgeKind = "depends"
	// Routes joins endpoints to the pods they route to: dotted.
	Routes EdgeKind = "routes"
)

// Badge is a short coloured status on a node: Healthy, OutOfSync, wave 2.
type Badge struct {
	Text  string `json:"text"`
	Class string `json:"class,omitempty"`
}

// Node is one box.
type Node struct {
	// ID names the node in edges and in the SVG (data-node).
	ID string `json:"id"`
	// Kind is the short kind shown before the name (app, deploy, pod).
	Kind   string  `json:"kind,omitempty"`
	Name   string  `json:"name"`
	Badges []Badge `json:"badges,omitempty"`
	// Lines are shown below, wrapped and cut to MaxLines lines (default
	// 3): what the node waits on, why it stalled.
	Lines    []string `json:"lines,omitempty"`
	MaxLines int      `json:"maxLines,omitempty"`
	// Class adds CSS classes to the node (its health, "stalled").
	Class string `json:"class,omitempty"`
	// Href links the node; without it the node still takes the focus.
	Href string `json:"href,omitempty"`
	// Label is the node's accessible name and hover text; default the
	// name, badges and lines.
	Label string `json:"label,omitempty"`
}

// Column is a column of nodes, top to bottom, under its label.
type Column struct {
	Label string `json:"label"`
	Nodes []Node `json:"nodes"`
}

// Edge joins two nodes by their IDs; an edge naming a missing node is
// left out.
type Edge struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Kind  EdgeKind `json:"kind"`
	Label string   `json:"label,omitempty"`
}

// Graph is a picture of columns and edges.
type Graph struct {
	// ID is unique within the page: it prefixes the SVG's element ids.
	ID string `json:"id"`
	// Label is the picture's accessible name; Desc its description (the
	// text alternative's summary).
	Label   string   `json:"label"`
	Desc    string   `json:"desc,omitempty"`
	Columns []Column `json:"columns"`
	Edges   []Edge   `json:"edges,omitempty"`
}

// Geometry, in SVG user units.
const (
	nodeWidth   = 210.0
	columnGap   = 52.0
	rowGap      = 12.0
	headerSpace = 46.0
	laneY       = margin + 34 // the lane above the nodes that parent edges take past columns
	margin      = 10.0
	lineHeight  = 15.0
	nodeBase    = 42.0 // kind and name, badges
	maxLines    = 3
	lineChars   = 28
	nameChars   = 23
)

type graphLayout struct {
	ID, Label, Desc, ArrowID string
	Width, Height, NodeWidth float64
	Columns                  []graphColumn
	Nodes                    []graphNode
	Edges                    []graphEdge
}

type graphColumn struct {
	X, Y, W, H, TextX float64
	Label             string
}

type graphNode struct {
	Node
	Name            string
	X, Y, H         float64
	Col, Row        int
	TextX, NameY    float64
	StripeH         float64
	Lines           []textLine
	BadgeList       []graphBadge
	AccessibleLabel string
}

type textLine struct {
	Y    float64
	Text string
}

type graphBadge struct {
	X, Y  float64
	Text  string
	Class string
}

type graphEdge struct {
	Path, Kind, Title string
}

// place lays the graph out.
func (g *Graph) place() graphLayout {
	id := cleanID(g.ID)
	l := graphLayout{ID: id, Label: g.Label, Desc: g.Desc, ArrowID: id + "-arrow", NodeWidth: nodeWidth}
	byID := map[string]*graphNode{}
	height := 0.0
	for c, col := range g.Columns {
		x := margin + float64(c)*(nodeWidth+columnGap)
		y := margin + headerSpace
		for r, n := range col.Nodes {
			nl := placeNode(n, x, y)
			nl.Col, nl.Row = c, r
			y += nl.H + rowGap
			l.Nodes = append(l.Nodes, nl)
		}
		height = math.Max(height, y)
		l.Columns = append(l.Columns, graphColumn{X: x - columnGap/4, Y: margin, W: nodeWidth + columnGap/2, TextX: x + nodeWidth/2, Label: col.Label})
	}
	for i := range l.Nodes {
		byID[l.Nodes[i].ID] = &l.Nodes[i]
	}
	height += margin
	for i := range l.Columns {
		l.Columns[i].H = height - margin - l.Columns[i].Y
	}
	// Room on the right for an edge that loops back.
	l.Width = margin*2 + float64(max(len(g.Columns), 1))*(nodeWidth+columnGap) - columnGap/2
	l.Height = math.Max(height, margin+headerSpace+nodeBase)
	for _, e := range g.Edges {
		from, to := byID[e.From], byID[e.To]
		if from == nil || to == nil || from == to {
			continue
		}
		title := e.Label
		if title == "" {
			title = from.Node.Name + " → " + to.Node.Name
		}
		path := edgePath(from, to)
		if e.Kind == Parent {
			path = treePath(from, to)
		}
		l.Edges = append(l.Edges, graphEdge{Path: path, Kind: string(e.Kind), Title: title})
	}
	return l
}

// placeNode lays one node out at x, y: its name, its badges (on more
// lines when they do not fit on one), its text lines.
func placeNode(n Node, x, y float64) graphNode {
	nl := graphNode{Node: n, Name: shorten(n.Name, nameChars), X: x, Y: y, TextX: x + 12, NameY: y + 18}
	nl.AccessibleLabel = n.accessibleLabel()
	bx, by := x+12, y+35
	for _, b := range n.Badges {
		w := float64(len([]rune(b.Text))) * 7
		if bx > x+12 && bx+w > x+nodeWidth-6 {
			bx, by = x+12, by+lineHeight
		}
		nl.BadgeList = append(nl.BadgeList, graphBadge{X: bx, Y: by, Text: b.Text, Class: b.Class})
		bx += w + 12
	}
	top := by - 35 + nodeBase // below the last line of badges
	if len(n.Badges) == 0 {
		top -= lineHeight
	}
	for i, line := range wrap(n.Lines, cmp.Or(n.MaxLines, maxLines)) {
		nl.Lines = append(nl.Lines, textLine{Y: top + 11 + float64(i)*lineHeight, Text: line})
	}
	nl.H = top - y + float64(len(nl.Lines))*lineHeight
	if len(nl.Lines) > 0 {
		nl.H += 6
	}
	nl.StripeH = nl.H
	return nl
}

// treePath joins a parent to a child on the right with straight lines in
// the gaps between columns: out of the parent into the gap, along it to
// the child's height and into the child; past a column it takes the lane
// above the nodes, so it never runs behind another node.
func treePath(from, to *graphNode) string {
	if to.X <= from.X {
		return edgePath(from, to)
	}
	x1, y1 := from.X+nodeWidth, from.Y+from.H/2
	x2, y2 := to.X, to.Y+to.H/2
	gap1, gap2 := x1+columnGap/2, x2-columnGap/2
	if gap2-gap1 < 1 { // the next column
		return fmt.Sprintf("M%g,%g H%g V%g H%g", x1, y1, gap1, y2, x2)
	}
	return fmt.Sprintf("M%g,%g H%g V%g H%g V%g H%g", x1, y1, gap1, laneY, gap2, y2, x2)
}

// edgePath is a curve from the right side of from to the left side of
// to; between nodes of one column, or back to an earlier column, it loops
// out on the right.
func edgePath(from, to *graphNode) string {
	y1, y2 := from.Y+from.H/2, to.Y+to.H/2
	if to.X > from.X {
		x1, x2 := from.X+nodeWidth, to.X
		dx := math.Max((x2-x1)/2, 24)
		return fmt.Sprintf("M%g,%g C%g,%g %g,%g %g,%g", x1, y1, x1+dx, y1, x2-dx, y2, x2, y2)
	}
	x1, x2 := from.X+nodeWidth, to.X+nodeWidth
	out := math.Max(x1, x2) + columnGap/2
	return fmt.Sprintf("M%g,%g C%g,%g %g,%g %g,%g", x1, y1, out, y1, out, y2, x2, y2)
}

func (n Node) accessibleLabel() string {
	if n.Label != "" {
		return n.Label
	}
	parts := []string{strings.TrimSpace(n.Kind + " " + n.Name)}
	for _, b := range n.Badges {
		parts = append(parts, b.Text)
	}
	parts = append(parts, n.Lines...)
	return strings.Join(parts, ", ")
}

// wrap breaks lines into at most limit lines of lineChars runes, cutting
// the last with an ellipsis.
func wrap(lines []string, limit int) []string {
	var out []string
	for _, line := range lines {
		words := strings.Fields(line)
		cur := ""
		for _, w := range words {
			switch {
			case cur == "":
				cur = w
			case len([]rune(cur))+1+len([]rune(w)) <= lineChars:
				cur += " " + w
			default:
				out = append(out, cur)
				cur = w
			}
		}
		if cur != "" {
			out = append(out, cur)
		}
	}
	for i := range out {
		out[i] = shorten(out[i], lineChars)
	}
	if len(out) > limit {
		out = append(out[:limit-1], shorten(out[limit-1]+" …", lineChars))
		if !strings.HasSuffix(out[limit-1], "…") {
			out[limit-1] += "…"
		}
	}
	return out
}
