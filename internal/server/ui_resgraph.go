package server

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/diagram"
)

// maxGraphResources is how many objects the resource graph draws.
const maxGraphResources = 200

// newResourceGraph draws app's own objects by depth, left to right: its
// managed objects (a child Application is one node, linked to its page),
// what they own (ReplicaSets, EndpointSlices), what those own (Pods);
// owners joined to what they own, endpoint slices to the pods they route
// to, which sit right of them. It also returns how many objects it left
// out.
func newResourceGraph(tree *appclient.ApplicationTree, app, linkNS string) (template.HTML, int, error) {
	g, left := resourceGraph(tree, app, linkNS)
	if len(g.Columns) == 0 {
		return "", 0, nil
	}
	svg, err := g.SVG()
	return svg, left, err
}

// resourceGraph lays out newResourceGraph's graph.
func resourceGraph(tree *appclient.ApplicationTree, app, linkNS string) (diagram.Graph, int) {
	depth := map[string]int{}
	var nodes []appclient.ResourceNode
	var edges []diagram.Edge
	left := 0
	for _, n := range tree.Nodes {
		if n.App != app {
			continue
		}
		id, d := resourceID(n.ResourceRef), 0
		if len(n.ParentRefs) > 0 {
			pd, ok := depth[resourceID(n.ParentRefs[0])]
			if !ok {
				continue // below a child app: on the child's page
			}
			d = pd + 1
		}
		if len(depth) == maxGraphResources {
			left++
			continue
		}
		depth[id] = d
		nodes = append(nodes, n)
		if len(n.ParentRefs) > 0 {
			edges = append(edges, diagram.Edge{From: resourceID(n.ParentRefs[0]), To: id, Kind: diagram.Parent})
		}
		if n.NetworkingInfo != nil {
			for _, t := range n.NetworkingInfo.TargetRefs {
				edges = append(edges, diagram.Edge{From: id, To: resourceID(t), Kind: diagram.Routes, Label: n.Name + " routes to " + t.Kind + " " + t.Name})
			}
		}
	}
	if len(nodes) == 0 {
		return diagram.Graph{}, 0
	}
	for _, e := range edges { // a routed pod sits right of its endpoints
		if d, ok := depth[e.To]; ok && e.Kind == diagram.Routes && d <= depth[e.From] {
			depth[e.To] = depth[e.From] + 1
		}
	}
	var cols [][]diagram.Node
	var kinds [][]string
	for _, n := range nodes {
		d := depth[resourceID(n.ResourceRef)]
		for len(cols) <= d {
			cols, kinds = append(cols, nil), append(kinds, nil)
		}
		cols[d] = append(cols[d], resourceNode(n, resourceID(n.ResourceRef), linkNS))
		if !slices.Contains(kinds[d], n.Kind) {
			kinds[d] = append(kinds[d], n.Kind)
		}
	}
	g := diagram.Graph{ID: "resource-graph", Label: "Resources of " + app + " by owner", Edges: edges}
	for d, c := range cols {
		g.Columns = append(g.Columns, diagram.Column{Label: kindsLabel(d, kinds[d]), Nodes: c})
	}
	g.Desc = fmt.Sprintf("%d objects of %s in %d columns: managed objects, then what each owns.", len(nodes), app, len(cols))
	return g, left
}

// resourceID names an object in the graph: its UID, or its kind and name
// when it does not exist yet.
func resourceID(r appclient.ResourceRef) string {
	if r.UID != "" {
		return r.UID
	}
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// resourceNode is one object's box: its health and sync, its wave, and
// what the tree knows of it (replicas, endpoints, pod status).
func resourceNode(n appclient.ResourceNode, id, linkNS string) diagram.Node {
	node := diagram.Node{ID: id, Kind: kindIcon(n.Kind), Name: n.Name}
	var label []string
	label = append(label, n.Kind+" "+qualified(n.Namespace, n.Name))
	if n.Health != nil && n.Health.Status != "" {
		h := string(n.Health.Status)
		node.Class = "h-" + h
		node.Badges = append(node.Badges, diagram.Badge{Text: h, Class: "h-" + h})
		label = append(label, h)
	}
	if n.Status != "" {
		node.Badges = append(node.Badges, diagram.Badge{Text: string(n.Status), Class: "s-" + string(n.Status)})
		label = append(label, string(n.Status))
	}
	if n.SyncWave != 0 {
		node.Badges = append(node.Badges, diagram.Badge{Text: fmt.Sprintf("wave %d", n.SyncWave)})
	}
	if n.Missing {
		node.Class += " missing"
		node.Lines = append(node.Lines, "not created yet")
	}
	for _, it := range n.Info[:min(len(n.Info), 2)] {
		node.Lines = append(node.Lines, it.Name+": "+it.Value)
	}
	if n.Health != nil && n.Health.Message != "" && n.Health.Status != "Healthy" {
		node.Lines = append(node.Lines, n.Health.Message)
	}
	if application.IsApplication(n.Group, n.Kind) {
		node.Href = appHref(n.Name, linkNS)
	}
	node.Label = strings.Join(append(label, node.Lines...), ", ")
	return node
}

// kindsLabel names the column of depth d by the kinds in it.
func kindsLabel(d int, kinds []string) string {
	switch {
	case len(kinds) <= 3:
		return strings.Join(kinds, " · ")
	case d == 0:
		return "managed objects"
	}
	return "owned objects"
}
