package cli

import (
	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/rehearsal"
)

func newDownCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop and remove the local cluster of wavecd up",
		Long: `Stop the local cluster that "wavecd up" started from this directory, wait
until none of its processes is left, and remove .wavecd/ (the cluster's data,
the repository snapshot, the controller's cache and log).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return (&rehearsal.Down{Out: s.Out}).Run(cmd.Context())
		},
	}
}
