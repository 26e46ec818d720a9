// Package component runs one control-plane component in the current
// process: kube-apiserver, kube-controller-manager, kube-scheduler or KWOK.
// The supervisor re-executes its own binary once per component because the
// Kubernetes components keep process-wide state (logging, metrics,
// feature gates) and cannot share one process.
package component

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream binaries have
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"

	_ "time/tzdata" // CronJob time zones
)

var kubeComponents = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
}

// Run runs the named component with args until it stops and returns the
// process exit code.
func Run(name string, args []string) int {
	if name == "kwok" {
		return runKWOK(args)
	}
	newCmd, ok := kubeComponents[name]
	if !ok {
		names := []string{"kwok"}
		for n := range kubeComponents {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "unknown component %q: want one of %s\n", name, strings.Join(names, ", "))
		return 2
	}
	cmd := newCmd()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// runKWOK mirrors KWOK's own main: its configuration loader reads the
// --config flag before the command runs.
func runKWOK(args []string) int {
	// The Kubernetes packages linked into this binary register a global
	// --version flag of their own type; KWOK's command adds a bool one.
	pflag.CommandLine = pflag.NewFlagSet("kwok", pflag.ExitOnError)
	flags := pflag.NewFlagSet("kwok", pflag.ContinueOnError)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	flags.Usage = func() {}
	ctx := signals.SetupSignalContext()
	ctx, logger := kwoklog.InitFlags(ctx, flags)
	ctx, err := kwokconfig.InitFlags(ctx, flags)
	if err != nil {
		logger.Error("load kwok config", "err", err)
		return 1
	}
	cmd := kwokcmd.NewCommand(ctx)
	cmd.PersistentFlags().AddFlagSet(flags)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		logger.Error("kwok exited", "err", err)
		return 1
	}
	return 0
}
