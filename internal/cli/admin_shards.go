package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/shard"
)

func newAdminShardsCommand(s Streams) *cobra.Command {
	var f namespaceFlags
	var output string
	var apps bool
	var patterns []string
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "List the sharded controller replicas, their apps and load",
		Long: `List the live controller replicas of a sharded install (one Lease each,
labelled wavecd.io/controller-replica) with the apps each reconciles, computed
as they compute it: consistent hashing with bounded loads over the apps of
the namespace, pins by the wavecd.io/shard annotation and cluster Secrets'
shard key. LOAD is a replica's apps over the most one may take by hashing,
ceil(apps/replicas x 1.25). AGREED says whether the replica serves this
assignment; "no" means a hand-over is under way.`,
		Example: `  wavecd admin shards -n argocd
  wavecd admin shards --apps
  wavecd admin shards -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output, "wide", "json", "yaml"); err != nil {
				return err
			}
			_, c, err := f.connect()
			if err != nil {
				return err
			}
			ns := application.Namespaces{Control: f.namespace, Patterns: patterns}
			shards, err := listShards(cmd.Context(), c, ns, time.Now())
			if err != nil {
				return err
			}
			return printShards(s.Out, output, apps, shards, time.Now())
		},
	}
	f.addTo(cmd.Flags(), "namespace of the controller and its Applications")
	addAppNamespacesFlag(cmd.Flags(), &patterns, "sharded")
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	cmd.Flags().BoolVar(&apps, "apps", false, "list each replica's apps")
	return cmd
}

// listShards reads the live replicas and the apps of ns and computes each
// replica's share.
func listShards(ctx context.Context, c client.Reader, ns application.Namespaces, now time.Time) ([]shard.Shard, error) {
	namespace := ns.Control
	replicas, err := shard.LiveReplicas(ctx, c, namespace, now)
	if err != nil {
		return nil, err
	}
	if len(replicas) == 0 {
		return nil, fmt.Errorf("no live controller replica in namespace %s: sharding is off (wavecd controller --sharding turns it on) or no replica runs", namespace)
	}
	apps, err := shard.ListApps(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	return shard.Shards(apps, replicas), nil
}

func printShards(w io.Writer, output string, withApps bool, shards []shard.Shard, now time.Time) error {
	if output != "wide" {
		return printStructured(w, output, shards)
	}
	tw := newTable(w)
	header := "SHARD\tREPLICA\tAPPS\tLOAD\tRENEWED\tAGREED"
	if withApps {
		header += "\tNAMES"
	}
	fmt.Fprintln(tw, header)
	for _, s := range shards {
		agreed := "yes"
		if !s.Agreed {
			agreed = "no"
		}
		line := fmt.Sprintf("%d\t%s\t%d\t%.0f%%\t%s ago\t%s", s.Index, s.Replica, len(s.Apps), 100*s.Load,
			now.Sub(s.Renewed).Round(time.Second), agreed)
		if withApps {
			line += "\t" + joinOrDash(s.Apps)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
