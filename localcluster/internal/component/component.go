// Package component runs one control-plane component in the current
// process: kube-apiserver, kube-controller-manager, kube-scheduler, KWOK or
// the workloads controller (package workloads).
// The supervisor re-executes its own binary once per component because the
// Kubernetes components keep process-wide state (logging, metrics,
// feature gates) and cannot share one process.
package component

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream binaries have
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/network"
	"github.com/wavecd/wavecd/localcluster/internal/workloads"

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
	switch name {
	case "kwok":
		return runKWOK(args)
	case "workloads":
		return runWorkloads(args)
	}
	newCmd, ok := kubeComponents[name]
	if !ok {
		names := []string{"kwok", "workloads"}
		for n := range kubeComponents {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "unknown component %q: want one of %s\n", name, strings.Join(names, ", "))
		return 2
	}
	if err := stampKubeVersion(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	cmd := newCmd()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// runWorkloads runs the workloads controller until SIGTERM or SIGINT.
func runWorkloads(args []string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	flags := pflag.NewFlagSet("workloads", pflag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "admin kubeconfig")
	selector := flags.String("cni-agent-selector", "", "label selector of CNI agent pods (CNI mode)")
	definitions := flags.String("processes", "", "JSON file of the process definitions (process-backed pods)")
	procDir := flags.String("process-dir", "", "directory of the processes' working directories; empty turns process-backed pods off")
	logDir := flags.String("process-log-dir", "", "directory of the processes' logs")
	simulation := flags.String("simulation", "", "JSON file of the simulation settings (workload overrides, ingress controller, time scale)")
	egressListen := flags.String("egress-listen", "", "127.0.0.1 address of the API server's egress proxy; empty turns it off")
	caCert := flags.String("ca-cert", "", "the cluster's CA certificate, to sign serving certificates of Services")
	caKey := flags.String("ca-key", "", "the cluster's CA key")
	if err := flags.Parse(args); err != nil {
		log.Error("parse flags", "err", err)
		return 2
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Error("load kubeconfig", "err", err)
		return 1
	}
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Error("build client", "err", err)
		return 1
	}
	procs := workloads.ProcessOptions{Dir: *procDir, LogDir: *logDir, Server: cfg.Host, CAData: cfg.CAData}
	if *definitions != "" {
		if procs.Definitions, err = readDefinitions(*definitions); err != nil {
			log.Error("read process definitions", "err", err)
			return 1
		}
	}
	opts := workloads.Options{CNIAgentSelector: *selector, Processes: procs, Log: log}
	if *simulation != "" {
		if err := readJSON(*simulation, &opts.Simulation); err != nil {
			log.Error("read simulation settings", "err", err)
			return 1
		}
	}
	if *egressListen != "" {
		if opts.Egress.CA, err = network.LoadCA(*caCert, *caKey); err != nil {
			log.Error("load the cluster's CA", "err", err)
			return 1
		}
		opts.Egress.Listen = *egressListen
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := workloads.Run(ctx, client, opts); err != nil {
		log.Error("workloads controller exited", "err", err)
		return 1
	}
	return 0
}

func readDefinitions(path string) (map[string]config.Process, error) {
	var defs map[string]config.Process
	return defs, readJSON(path, &defs)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
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
