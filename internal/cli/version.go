package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/buildinfo"
)

func newVersionCommand(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the wavecd version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output, "text", "json", "yaml"); err != nil {
				return err
			}
			info := buildinfo.Get()
			if output != "text" {
				return printStructured(s.Out, output, info)
			}
			_, err := fmt.Fprintf(s.Out, "wavecd %s (commit %s, %s, %s)\n", info.Version, info.Commit, info.GoVersion, info.Platform)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}
