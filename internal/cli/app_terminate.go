package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/appclient"
)

func newAppTerminateOpCommand(s Streams, f *appFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "terminate-op NAME",
		Short: "Terminate an application's running sync",
		Long: `Ask the controller to end the application's running operation at once, like
argocd app terminate-op: running hooks are deleted, nothing more is applied,
and the operation ends Failed with "Operation terminated". Objects already
applied stay. It fails when no operation runs.`,
		Example: `  wavecd app terminate-op guestbook
  wavecd app get guestbook        # Operation: Failed, Operation terminated`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, name, err := f.clientFor(args[0])
			if err != nil {
				return err
			}
			if err := (&appclient.Terminate{Client: c, Name: name}).Run(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Application '%s' operation terminating\n", name)
			return nil
		},
	}
}
