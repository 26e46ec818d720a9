package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wavecd/wavecd/internal/appclient"
)

const appDeleteLong = `Delete an application, like argocd app delete in core mode.

With --cascade (the default) the command first adds the finalizer
resources-finalizer.argocd.argoproj.io (or its /background variant with
--propagation-policy background), so the controller deletes the app's objects
before the Application goes. --cascade=false removes those finalizers, so the
objects stay in the cluster. On a terminal a cascading delete asks first,
unless --yes.

With --wait the command prints the teardown's progress as the controller
reports it: the step (in wavecd mode the objects go in reverse sync-wave
order, each step gone before the next) and the objects it waits on, with
their finalizers and who clears them; and why a step is stalled.`

func newAppDeleteCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appclient.Delete{}
	var yes bool
	var timeout uint
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an application (and, by default, its objects)",
		Long:  appDeleteLong,
		Example: `  wavecd app delete guestbook --yes
  wavecd app delete guestbook --cascade=false   # keep the objects
  wavecd app delete guestbook --propagation-policy background --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, name, err := f.clientFor(args[0])
			if err != nil {
				return err
			}
			a.Client, a.Name, a.Timeout = c, name, time.Duration(timeout)*time.Second
			a.OnProgress = func(message string) {
				fmt.Fprintf(s.Err, "%s  %s\n", time.Now().Format(time.TimeOnly), message)
			}
			if !cmd.Flags().Changed("propagation-policy") {
				a.Propagation = ""
			}
			if a.Cascade && !yes && isTerminal(s) && !confirm(s, fmt.Sprintf("Are you sure you want to delete '%s/%s' and all its resources? [y/n] ", c.Namespace, name)) {
				fmt.Fprintf(s.Out, "The command to delete '%s/%s' was cancelled.\n", c.Namespace, name)
				return nil
			}
			if err := a.Run(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "application '%s/%s' deleted\n", c.Namespace, name)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&a.Cascade, "cascade", true, "delete the app's objects too (adds the resources finalizer)")
	fl.StringVarP(&a.Propagation, "propagation-policy", "p", "foreground", "how the controller deletes the objects: foreground or background")
	fl.BoolVarP(&yes, "yes", "y", false, "do not ask before a cascading delete")
	fl.BoolVar(&a.Wait, "wait", false, "wait until the Application is gone")
	fl.UintVar(&timeout, "timeout", 0, "with --wait: seconds to wait (0: no limit)")
	return cmd
}

// isTerminal reports whether the command's input is an interactive terminal.
func isTerminal(s Streams) bool {
	f, ok := s.In.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func confirm(s Streams, question string) bool {
	fmt.Fprint(s.Err, question)
	answer, _ := bufio.NewReader(s.In).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(answer), "y") || strings.EqualFold(strings.TrimSpace(answer), "yes")
}
