package server

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/diagram"
)

// maxGraphResources is how many objects the resource graph draws.
const maxGraphResources = 200

// newResourceGraph draws app's own objects by depth, left to right: its
// managed objects (a child Application is one node, linked to its page),
// what they own (ReplicaSets, EndpointSlices), what those own (Pods);
// owners joined to what they own, endpoint slices to the pods they route
// to. It also returns how many objects it left out.
func newResourceGraph(tree *appclient.ApplicationTree, app string) (template.HTML, int, error) {
	depth := map[string]int{}
	var cols [][]diagram.Node
	var kinds [][]string
	var edges []diagram.Edge
	left := 0
	for _, n := range tree.Nodes {
		if n.App != app {
			continue
		}
		id := resourceID(n.ResourceRef)
		d := 0
		if len(n.ParentRefs) > 0 {
			pd, ok := depth[resourceID(n.ParentRefs[0])]
			if !ok {
				continue // below a child app: on the child's page
			}
			d = pd + 1
			edges = append(edges, diagram.Edge{From: resourceID(n.ParentRefs[0]), To: id, Kind: diagram.Parent})
		}
		if len(depth) == maxGraphResources {
			left++
			continue
		}
		depth[id] = d
		for len(cols) <= d {
			cols, kinds = append(cols, nil), append(kinds, nil)
		}
		cols[d] = append(cols[d], resourceNode(n, id))
		if !slices.Contains(kinds[d], n.Kind) {
			kinds[d] = append(kinds[d], n.Kind)
		}
		if n.NetworkingInfo != nil {
			for _, t := range n.NetworkingInfo.TargetRefs {
				edges = append(edges, diagram.Edge{From: id, To: resourceID(t), Kind: diagram.Routes, Label: n.Name + " routes to " + t.Kind + " " + t.Name})
			}
		}
	}
	if len(cols) == 0 {
		return "", 0, nil
	}
	g := diagram.Graph{ID: "resource-graph", Label: "Resources of " + app + " by owner", Edges: edges}
	for d, c := range cols {
		g.Columns = append(g.Columns, diagram.Column{Label: kindsLabel(kinds[d]), Nodes: c})
	}
	g.Desc = fmt.Sprintf("%d objects of %s in %d columns: managed objects, then what each owns.", len(depth), app, len(cols))
	svg, err := g.SVG()
	return svg, left, err
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
func resourceNode(n appclient.ResourceNode, id string) diagram.Node {
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
	if appclient.IsApplication(n.Group, n.Kind) {
		node.Href = appHref(n.Name)
	}
	node.Label = strings.Join(append(label, node.Lines...), ", ")
	return node
}

// kindsLabel names a column by the kinds in it.
func kindsLabel(kinds []string) string {
	if len(kinds) > 3 {
		return fmt.Sprintf("%d kinds", len(kinds))
	}
	return strings.Join(kinds, " · ")
}
