package appset

import (
	"errors"
	"fmt"
	"maps"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

// clusters yields one parameter set per registered cluster whose Secret
// matches the selector. The implicit in-cluster destination has no Secret
// and so no labels: it is generated only when the selector is empty.
func (g *generation) clusters(c *v1alpha1.ClusterGenerator, parent params) ([]params, error) {
	if g.in.Clusters == nil {
		return nil, errors.New("no cluster registry configured")
	}
	all, err := g.in.Clusters.List(g.ctx)
	if err != nil {
		// A cluster left out would have its apps deleted: no partial list.
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	var out []params
	for i := range all {
		cl := &all[i]
		if cl.SecretName == "" {
			if !emptySelector(&c.Selector) {
				continue
			}
		} else {
			ok, err := selectorMatches(&c.Selector, cl.Labels)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		p := g.clusterParams(cl)
		if err := appendValues(p, c.Values, parent, g.r); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (g *generation) clusterParams(cl *cluster.Cluster) params {
	p := params{"name": cl.Name, "nameNormalized": normalize(cl.Name), "server": cl.Server}
	if cl.SecretName == "" {
		// Argo CD does not normalize the implicit cluster's name.
		p["nameNormalized"] = cl.Name
		return p
	}
	if g.r.goTemplate {
		meta := map[string]any{}
		if len(cl.Labels) > 0 {
			meta["labels"] = maps.Clone(cl.Labels)
		}
		if len(cl.Annotations) > 0 {
			meta["annotations"] = maps.Clone(cl.Annotations)
		}
		p["metadata"] = meta
		return p
	}
	for k, v := range cl.Labels {
		p["metadata.labels."+k] = v
	}
	for k, v := range cl.Annotations {
		p["metadata.annotations."+k] = v
	}
	return p
}
