package shard

import (
	"context"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/cluster"
)

// AppsOf are the apps to assign, each keyed by its instance name in ns and
// with its pin: the wavecd.io/shard annotation (a replica index), else
// the `shard` key of the cluster Secret its destination names.
func AppsOf(apps []v1alpha1.Application, clusters []cluster.Cluster, ns application.Namespaces) []App {
	pins := map[string]int{}
	for _, c := range clusters {
		if c.Shard != nil {
			pins["server:"+c.Server] = int(*c.Shard)
			if c.Name != "" {
				pins["name:"+c.Name] = int(*c.Shard)
			}
		}
	}
	out := make([]App, 0, len(apps))
	for i := range apps {
		out = append(out, App{Key: ns.InstanceName(apps[i].Namespace, apps[i].Name), Shard: pinOf(&apps[i], pins)})
	}
	return out
}

func pinOf(app *v1alpha1.Application, clusterPins map[string]int) int {
	if v, ok := app.Annotations[AnnotationShard]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return n
		}
	}
	d := app.Spec.Destination
	if n, ok := clusterPins["server:"+strings.TrimRight(d.Server, "/")]; ok && d.Server != "" {
		return n
	}
	if n, ok := clusterPins["name:"+d.Name]; ok && d.Name != "" {
		return n
	}
	return -1
}

// ListApps lists the Applications of ns and the cluster Secrets of its
// control namespace through reader, as AppsOf takes them. A broken
// cluster Secret pins nothing.
func ListApps(ctx context.Context, reader client.Reader, ns application.Namespaces) ([]App, error) {
	apps, err := application.Lister{Reader: reader, Namespaces: ns.Watch(), Enabled: ns.Enabled}.ListApplications(ctx)
	if err != nil {
		return nil, err
	}
	clusters, err := cluster.Registry{Reader: reader, Namespace: ns.Control}.List(ctx)
	if err != nil {
		clusters = nil
	}
	return AppsOf(apps, clusters, ns), nil
}

// Shard is one replica's share, as `wavecd admin shards` shows it.
type Shard struct {
	// Index is the replica's position among the live replicas by name
	// (what a wavecd.io/shard pin names).
	Index   int    `json:"index"`
	Replica string `json:"replica"`
	// Apps are the app names it serves, sorted.
	Apps []string `json:"apps"`
	// Load is its apps over Capacity.
	Load float64 `json:"load"`
	// Renewed is when it last renewed its Lease.
	Renewed time.Time `json:"renewed"`
	// Agreed says whether it publishes the assignment computed here.
	Agreed bool `json:"agreed"`
}

// Shards computes the assignment of apps over the live replicas, as they
// do, and each replica's share.
func Shards(apps []App, replicas []Replica) []Shard {
	names := make([]string, len(replicas))
	for i, r := range replicas {
		names[i] = r.Name
	}
	table := Assign(apps, names)
	hash := tableHash(table)
	limit := Capacity(len(apps), len(replicas))
	out := make([]Shard, len(replicas))
	index := map[string]int{}
	for i, r := range replicas {
		out[i] = Shard{Index: i, Replica: r.Name, Apps: []string{}, Renewed: r.Renewed, Agreed: r.Assignment == hash}
		index[r.Name] = i
	}
	for _, a := range apps {
		i := index[table[a.Key]]
		out[i].Apps = append(out[i].Apps, a.Key)
	}
	for i := range out {
		sortStrings(out[i].Apps)
		if limit > 0 {
			out[i].Load = float64(len(out[i].Apps)) / float64(limit)
		}
	}
	return out
}
