package appset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

// DefaultDecisionRequeue is how often a cluster-decision-resource
// generator reads its resources again when it sets no
// requeueAfterSeconds, as Argo CD.
const DefaultDecisionRequeue = 3 * time.Minute

// Resources lists the objects of one resource in a namespace, for the
// cluster-decision-resource generator; KubeResources lists them from the
// API server.
type Resources interface {
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]unstructured.Unstructured, error)
}

// KubeResources lists resources with a dynamic client.
type KubeResources struct{ Client dynamic.Interface }

// List lists the namespace's objects of gvr that opts select.
func (k KubeResources) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]unstructured.Unstructured, error) {
	list, err := k.Client.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// decisionSource is what a generator's ConfigMap says: the resource to
// read, the status list in it and the key naming a cluster.
type decisionSource struct {
	gvr                     schema.GroupVersionResource
	statusListKey, matchKey string
}

// clusterDecisions yields one parameter set per decision (an entry of the
// resources' status list) that names a registered cluster: `name`,
// `server`, the decision's own keys, and `values` (as written, not
// rendered, as in Argo CD).
func (g *generation) clusterDecisions(d *v1alpha1.DuckTypeGenerator) ([]params, error) {
	g.noteRequeue(requeueOr(d.RequeueAfterSeconds, DefaultDecisionRequeue))
	if g.in.Objects == nil || g.in.Resources == nil {
		return nil, errors.New("the clusterDecisionResource generator needs a cluster to read, which is not available here")
	}
	src, err := g.decisionSource(d.ConfigMapRef)
	if err != nil {
		return nil, err
	}
	opts, err := decisionListOptions(d)
	if err != nil {
		return nil, err
	}
	items, err := g.in.Resources.List(g.ctx, src.gvr, g.set.Namespace, opts)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", src.gvr.String(), err)
	}
	if len(items) == 0 {
		return nil, errors.New("no clusterDecisionResources found")
	}
	clusters, err := g.in.Clusters.List(g.ctx)
	if err != nil && len(clusters) == 0 {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	var out []params
	for _, decision := range decisions(items, src.statusListKey) {
		c := matchCluster(clusters, decision, src.matchKey)
		if c == nil {
			continue
		}
		p := params{"name": c.Name, "server": c.Server}
		for k, v := range decision {
			p[k] = fmt.Sprint(v)
		}
		addRawValues(p, d.Values, g.r.goTemplate)
		out = append(out, p)
	}
	return out, nil
}

// decisionSource reads the generator's ConfigMap: apiVersion (group and
// version), kind (the resource's plural name, as Argo CD reads it),
// statusListKey (default clusters) and matchKey.
func (g *generation) decisionSource(name string) (*decisionSource, error) {
	cm, err := g.in.Objects.ConfigMapData(g.ctx, g.set.Namespace, name)
	if err != nil {
		return nil, fmt.Errorf("configMapRef: %w", err)
	}
	group, version, ok := strings.Cut(cm["apiVersion"], "/")
	if !ok || group == "" || version == "" || cm["kind"] == "" {
		return nil, fmt.Errorf("ConfigMap %s: apiVersion %q and kind %q must name a group/version and a resource", name, cm["apiVersion"], cm["kind"])
	}
	if cm["matchKey"] == "" {
		return nil, fmt.Errorf("ConfigMap %s: matchKey is empty", name)
	}
	src := &decisionSource{
		gvr:           schema.GroupVersionResource{Group: group, Version: version, Resource: cm["kind"]},
		statusListKey: cm["statusListKey"], matchKey: cm["matchKey"],
	}
	if src.statusListKey == "" {
		src.statusListKey = "clusters"
	}
	return src, nil
}

// decisionListOptions select the resource by name or by labels: one of
// the two, as Argo CD requires.
func decisionListOptions(d *v1alpha1.DuckTypeGenerator) (metav1.ListOptions, error) {
	bySelector := len(d.LabelSelector.MatchLabels) > 0 || len(d.LabelSelector.MatchExpressions) > 0
	switch {
	case d.Name == "" && !bySelector:
		return metav1.ListOptions{}, errors.New("set name or labelSelector")
	case d.Name != "" && bySelector:
		return metav1.ListOptions{}, errors.New("set either name or labelSelector, not both")
	case d.Name != "":
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", d.Name).String()}, nil
	}
	return metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&d.LabelSelector)}, nil
}

// decisions are the objects of status.<key> of each item, in order.
func decisions(items []unstructured.Unstructured, key string) []map[string]any {
	var out []map[string]any
	for _, item := range items {
		list, _, _ := unstructured.NestedSlice(item.Object, "status", key)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// matchCluster is the registered cluster whose name the decision's
// matchKey holds, or nil.
func matchCluster(clusters []cluster.Cluster, decision map[string]any, matchKey string) *cluster.Cluster {
	v, ok := decision[matchKey]
	if !ok || v == nil || fmt.Sprint(v) == "" {
		return nil
	}
	i := slices.IndexFunc(clusters, func(c cluster.Cluster) bool { return c.Name == fmt.Sprint(v) })
	if i < 0 {
		return nil
	}
	return &clusters[i]
}

// addRawValues adds values as written: `values.<key>` (fasttemplate) or
// under `values` (goTemplate).
func addRawValues(p params, values map[string]string, goTemplate bool) {
	if len(values) == 0 {
		return
	}
	if !goTemplate {
		for k, v := range values {
			p["values."+k] = v
		}
		return
	}
	m := map[string]any{}
	for k, v := range values {
		m[k] = v
	}
	p["values"] = m
}
