package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/cluster"
)

// clusterProbeTimeout bounds the version request that checks a cluster.
const clusterProbeTimeout = 5 * time.Second

func newClusterListCommand(s Streams, f *namespaceFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered clusters and whether they answer",
		Long: `List the registered clusters (in-cluster first) with their API server version
and connection status: each is asked for its version with the credentials
stored in its Secret (in-cluster: your kubeconfig's), within 5 seconds.`,
		Example: `  wavecd cluster list
  wavecd cluster list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output, "wide", "json", "yaml"); err != nil {
				return err
			}
			cfg, home, err := f.connect()
			if err != nil {
				return err
			}
			rows, err := (&clusterList{Home: home, Local: cfg, Namespace: f.namespace}).Run(cmd.Context())
			if err != nil {
				return err
			}
			return printClusters(s.Out, output, rows)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

// clusterList lists the registered clusters and checks each.
type clusterList struct {
	Home client.Reader
	// Local is the kubeconfig's configuration, used for in-cluster.
	Local     *rest.Config
	Namespace string
}

// clusterRow is one registered cluster as listed.
type clusterRow struct {
	Name    string            `json:"name"`
	Server  string            `json:"server"`
	Version string            `json:"version,omitempty"`
	Status  string            `json:"status"`
	Message string            `json:"message,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Secret  string            `json:"secret,omitempty"`
}

// Connection statuses.
const (
	statusReachable   = "reachable"
	statusUnreachable = "unreachable"
)

// Run lists the clusters and probes them in parallel. A Secret that does
// not parse is left out and reported in the error.
func (a *clusterList) Run(ctx context.Context) ([]clusterRow, error) {
	all, listErr := cluster.Registry{Reader: a.Home, Namespace: a.Namespace}.List(ctx)
	if all == nil && listErr != nil {
		return nil, listErr
	}
	rows := make([]clusterRow, len(all))
	var wg sync.WaitGroup
	for i := range all {
		c := &all[i]
		rows[i] = clusterRow{Name: c.Name, Server: c.Server, Secret: c.SecretName, Labels: withoutSecretType(c.Labels)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i].Version, rows[i].Status, rows[i].Message = probe(ctx, c, a.Local)
		}()
	}
	wg.Wait()
	return rows, listErr
}

// probe asks the cluster for its version.
func probe(ctx context.Context, c *cluster.Cluster, local *rest.Config) (version, status, message string) {
	cfg, err := c.RESTConfig(local)
	if err != nil {
		return "", statusUnreachable, err.Error()
	}
	cfg.Timeout = clusterProbeTimeout
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", statusUnreachable, err.Error()
	}
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := d.ServerVersion()
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{v: v.GitVersion}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", statusUnreachable, r.err.Error()
		}
		return r.v, statusReachable, ""
	case <-ctx.Done():
		return "", statusUnreachable, ctx.Err().Error()
	}
}

func withoutSecretType(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	delete(out, cluster.LabelSecretType)
	if len(out) == 0 {
		return nil
	}
	return out
}

func printClusters(w io.Writer, output string, rows []clusterRow) error {
	if output != "wide" {
		return printStructured(w, output, rows)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSERVER\tVERSION\tSTATUS\tLABELS\tMESSAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Server, orDash(r.Version), r.Status, labelList(r.Labels), r.Message)
	}
	return tw.Flush()
}

// labelList formats labels as k=v,k=v sorted by key, "-" for none.
func labelList(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	items := make([]string, len(keys))
	for i, k := range keys {
		items[i] = k + "=" + labels[k]
	}
	return joinOrDash(items)
}
