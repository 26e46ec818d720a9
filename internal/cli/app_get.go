package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
)

const appGetLong = `Show an Application: its source, destination, sync policy, sync and health
status, conditions, last operation, and the objects it manages.

The object table follows status.resources. A child Application (app of apps)
that exists in the same namespace has its own objects listed under it,
indented, so one command shows a whole app-of-apps tree. -o tree shows the same
as a tree of KIND/NAME; -o yaml and -o json print the Application object.`

const appGetExample = `  # summary and objects
  wavecd app get guestbook

  # the Application object as stored
  wavecd app get guestbook -o yaml

  # an app-of-apps root as a tree
  wavecd app get root -o tree`

func newAppGetCommand(s Streams, f *appFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get NAME",
		Short:   "Show an application's status and objects",
		Long:    appGetLong,
		Example: appGetExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output, "wide", "tree", "json", "yaml"); err != nil {
				return err
			}
			c, name, err := f.clientFor(args[0])
			if err != nil {
				return err
			}
			t, err := (&appclient.Get{Client: c, Name: name}).Run(cmd.Context())
			if err != nil {
				return err
			}
			return printAppTree(s.Out, output, t)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, tree, json or yaml")
	return cmd
}

func printAppTree(w io.Writer, output string, t *appclient.AppTree) error {
	switch output {
	case "json", "yaml":
		return printStructured(w, output, cleanRaw(t.Raw).Object)
	}
	if err := printAppHeader(w, t.App); err != nil {
		return err
	}
	if len(t.App.Status.Resources) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if output == "tree" {
		return printResourceTree(w, t)
	}
	return printResourceTable(w, t)
}

// printAppHeader prints the summary, the conditions and the operation.
func printAppHeader(w io.Writer, app *v1alpha1.Application) error {
	printAppSummary(w, app)
	if len(app.Status.Conditions) > 0 {
		fmt.Fprintln(w)
		tw := newTable(w)
		fmt.Fprintln(tw, "CONDITION\tMESSAGE\tLAST TRANSITION")
		for _, c := range app.Status.Conditions {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Type, c.Message, formatTimePtr(c.LastTransitionTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if app.Status.OperationState != nil {
		fmt.Fprintln(w)
		printOperationState(w, app.Status.OperationState)
	}
	return nil
}

const appHistoryExample = `  wavecd app history guestbook
  wavecd app history guestbook -o id`

func newAppHistoryCommand(s Streams, f *appFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "Show an application's deployment history",
		Long: `Show the deployments recorded in status.history, oldest first, grouped by
source repository: the history ID (for app rollback), the deployment date and
the target revision with the commit it resolved to.`,
		Example: appHistoryExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output, "wide", "id"); err != nil {
				return err
			}
			c, name, err := f.clientFor(args[0])
			if err != nil {
				return err
			}
			app, err := c.Get(cmd.Context(), name)
			if err != nil {
				return err
			}
			if output == "id" {
				for _, h := range app.Status.History {
					fmt.Fprintln(s.Out, h.ID)
				}
				return nil
			}
			return printHistory(s.Out, app.Status.History)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide or id")
	return cmd
}
