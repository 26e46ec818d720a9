// Package cli owns the wavecd-localcluster command line: start, stop and
// status of a local control plane in a directory. Commands copy flags into
// the cluster package's options and print what comes back.
package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/localcluster/internal/cluster"
	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// NewRootCommand builds the command tree.
func NewRootCommand(out io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "wavecd-localcluster",
		Short: "Run a local Kubernetes control plane with simulated nodes",
		Long: `wavecd-localcluster runs a real Kubernetes control plane on this machine:
etcd, kube-apiserver, kube-controller-manager and kube-scheduler, with KWOK
simulating nodes and pod lifecycles. Everything listens on 127.0.0.1 only.

  wavecd-localcluster start --dir /tmp/c1 --nodes 2 --detach
  kubectl --kubeconfig /tmp/c1/kubeconfig get nodes
  wavecd-localcluster stop --dir /tmp/c1`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.AddCommand(newStartCommand(out), newStopCommand(out), newStatusCommand(out))
	return root
}

type startFlags struct {
	dir        string
	configFile string
	shorthand  config.Flags
	processes  []string
	timeScale  float64
	detach     bool
	timeout    time.Duration
}

// nodeFlags are the shorthand flags that --config replaces.
var nodeFlags = []string{"nodes", "node-cpu", "node-memory", "node-pods"}

const startLong = `Start etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK
and the workloads controller, create the simulated nodes, and write
DIR/kubeconfig (admin, RBAC on).

Without --detach the cluster runs in the foreground until Ctrl-C. With
--detach the command returns once the cluster is usable and the cluster keeps
running in the background until "wavecd-localcluster stop --dir DIR".

Signals to the supervisor (its PID is in DIR/state.json) simulate an API
server outage: SIGUSR1 stops kube-apiserver, SIGUSR2 starts it again on the
same port; etcd and the other components keep running.

--config FILE reads node groups and CNI mode from a YAML file:

  nodeGroups:
  - name: general            # nodes general-0, general-1
    count: 2
    cpu: "8"                 # defaults: 8 CPU, 32Gi memory, 110 pods
    memory: 32Gi
    labels: {tier: general}
    taints: [{key: dedicated, value: general, effect: NoSchedule}]
  cni:
    agentSelector: k8s-app=calico-node

In CNI mode (cni.agentSelector or --cni-agent-selector) nodes stay NotReady,
as without a CNI plugin, until a pod matching the selector runs on them.

Pods behave as their specs say, as a kubelet would run them: Ready after
their startupProbe and readinessProbe timings; crash-looping (CrashLoopBackOff)
while a Service their command, args or env names has no ready endpoint; Job
pods complete after a short run time. Admission webhooks and APIServices
backed by a Service answer only while it has a ready endpoint. The config
file can say what a spec cannot (all optional):

  workloads:                         # overrides by namespace, name, selector
  - {namespace: db, selector: app=pg, readyAfter: 20s}
  - {name: migrate, runTime: 30s, exitCode: 1}
  ingressController:                 # LoadBalancer Services and Ingresses get an address
    addresses: [203.0.113.10]
  nodeStartup: 30s                   # nodes a provisioner makes take this to boot

--time-scale 0.1 runs every simulated delay ten times faster.

A pod annotated localcluster.wavecd.io/process: NAME, or running an image of
the definition NAME, is backed by a real process on this machine, run while
the pod would run, with a kubeconfig of the pod's ServiceAccount in
$KUBECONFIG. Built-in names: karpenter (the
karpenter-kwok binary next to this one, or in PATH) and wavecd (likewise).
Define more, or lay fields over the built-ins, in the config file:

  processes:
    karpenter:
      images: [public.ecr.aws/karpenter/controller]   # pods running this image run the process
    whoami:
      command: [/bin/sh, ./whoami.sh]   # replaces the container's command
      args: [--verbose]                 # after the container's args
      env: {LOG_LEVEL: debug}           # over the container's env
      freePorts: [METRICS_PORT]         # a free 127.0.0.1 port each start

or set a command with --process NAME=PATH (for example
--process karpenter=localcluster/bin/karpenter-kwok).`

func newStartCommand(out io.Writer) *cobra.Command {
	f := startFlags{}
	cmd := &cobra.Command{
		Use:   "start --dir DIR [--config FILE | --nodes N]",
		Short: "Start a cluster (reusing the etcd data of an earlier run in DIR)",
		Long:  startLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dir == "" {
				return fmt.Errorf("--dir is required")
			}
			cfg, err := f.resolve(cmd)
			if err != nil {
				return err
			}
			if f.detach {
				return startDetached(cmd, out, f)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return cluster.Run(ctx, cluster.Options{Dir: f.dir, Config: cfg, Progress: out})
		},
	}
	cmd.Flags().StringVar(&f.dir, "dir", "", "directory holding the cluster's data, PKI, logs and kubeconfig (required)")
	cmd.Flags().StringVar(&f.configFile, "config", "", "YAML file with node groups and CNI mode (replaces --nodes and --node-*)")
	cmd.Flags().IntVar(&f.shorthand.Nodes, "nodes", 1, "number of simulated nodes (one group named wavecd-node)")
	cmd.Flags().StringVar(&f.shorthand.CPU, "node-cpu", config.DefaultCPU, "CPU capacity of each node")
	cmd.Flags().StringVar(&f.shorthand.Memory, "node-memory", config.DefaultMemory, "memory capacity of each node")
	cmd.Flags().StringVar(&f.shorthand.Pods, "node-pods", config.DefaultPods, "pod capacity of each node")
	cmd.Flags().StringVar(&f.shorthand.AgentSelector, "cni-agent-selector", "",
		"CNI mode: nodes are NotReady until a pod matching this label selector runs on them (e.g. k8s-app=calico-node)")
	cmd.Flags().StringArrayVar(&f.processes, "process", nil,
		"NAME=COMMAND: the executable of process-backed pods annotated localcluster.wavecd.io/process: NAME (repeatable)")
	cmd.Flags().Float64Var(&f.timeScale, "time-scale", 1,
		"multiply every simulated delay (probe timings, back-off, run times, node start-up) by this factor, e.g. 0.1")
	cmd.Flags().BoolVar(&f.detach, "detach", false, "run in the background and return once the cluster is usable")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 3*time.Minute, "with --detach, how long to wait for the cluster to be usable")
	return cmd
}

// resolve builds the cluster configuration from --config or the shorthand
// flags, refusing to mix them, and lays the process definitions of the
// file and the --process flags over the built-in ones.
func (f *startFlags) resolve(cmd *cobra.Command) (config.Config, error) {
	cfg, err := f.resolveNodes(cmd)
	if err != nil {
		return config.Config{}, err
	}
	fromFlags := map[string]config.Process{}
	for i, v := range f.processes {
		name, p, err := config.ParseProcessFlag(v)
		if err != nil {
			return config.Config{}, err
		}
		fromFlags[name] = fromFlags[name].Overlay(p)
		f.processes[i] = name + "=" + p.Command[0] // absolute, for a detached start
	}
	cfg.Processes = config.MergeProcesses(config.BuiltinProcesses(besideSelf), cfg.Processes, fromFlags)
	if f.timeScale <= 0 {
		return config.Config{}, fmt.Errorf("--time-scale %g: want a factor above 0, such as 0.1", f.timeScale)
	}
	cfg.TimeScale = f.timeScale
	if err := cfg.Validate(); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// besideSelf is the path of binary when it sits next to this executable,
// else its bare name, looked up in PATH when a process starts.
func besideSelf(binary string) string {
	self, err := os.Executable()
	if err != nil {
		return binary
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	path := filepath.Join(filepath.Dir(self), binary)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
		return path
	}
	return binary
}

func (f *startFlags) resolveNodes(cmd *cobra.Command) (config.Config, error) {
	if f.configFile == "" {
		return config.FromFlags(f.shorthand)
	}
	for _, name := range nodeFlags {
		if cmd.Flags().Changed(name) {
			return config.Config{}, fmt.Errorf("--%s and --config exclude each other: set node groups in the config file", name)
		}
	}
	abs, err := filepath.Abs(f.configFile)
	if err != nil {
		return config.Config{}, fmt.Errorf("resolve --config: %w", err)
	}
	f.configFile = abs
	cfg, err := config.Load(abs)
	if err != nil {
		return config.Config{}, err
	}
	if sel := f.shorthand.AgentSelector; sel != "" {
		if cfg.CNI != nil {
			return config.Config{}, fmt.Errorf("--cni-agent-selector and cni.agentSelector in %s exclude each other", abs)
		}
		cfg.CNI = &config.CNI{AgentSelector: sel}
		if err := cfg.Validate(); err != nil { // the file was valid: the flag is not
			return config.Config{}, fmt.Errorf("--cni-agent-selector: %w", err)
		}
	}
	return cfg, nil
}

func startDetached(cmd *cobra.Command, out io.Writer, f startFlags) error {
	args := []string{"start", "--dir", f.dir}
	if f.configFile != "" {
		args = append(args, "--config", f.configFile)
	} else {
		args = append(args, "--nodes", fmt.Sprint(f.shorthand.Nodes), "--node-cpu", f.shorthand.CPU,
			"--node-memory", f.shorthand.Memory, "--node-pods", f.shorthand.Pods)
	}
	if f.shorthand.AgentSelector != "" {
		args = append(args, "--cni-agent-selector", f.shorthand.AgentSelector)
	}
	for _, p := range f.processes {
		args = append(args, "--process", p)
	}
	args = append(args, "--time-scale", strconv.FormatFloat(f.timeScale, 'g', -1, 64))
	st, err := cluster.StartDetached(cmd.Context(), f.dir, args, f.timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster ready in %s (pid %d)\nserver:     %s\nkubeconfig: %s\n",
		st.ReadyAfter, st.SupervisorPID, cluster.Server(st.Ports.APIServer), cluster.Layout{Dir: f.dir}.Kubeconfig())
	return nil
}

func newStopCommand(out io.Writer) *cobra.Command {
	var dir string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "stop --dir DIR",
		Short: "Stop the cluster in DIR; its data stays for the next start",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required")
			}
			was, err := cluster.Stop(cmd.Context(), dir, grace)
			if err != nil {
				return err
			}
			if was {
				fmt.Fprintln(out, "cluster stopped")
			} else {
				fmt.Fprintln(out, "cluster was not running")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the cluster's directory (required)")
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "how long to wait for a clean shutdown before killing")
	return cmd
}

func newStatusCommand(out io.Writer) *cobra.Command {
	var dir, output string
	cmd := &cobra.Command{
		Use:   "status --dir DIR",
		Short: "Show whether the cluster in DIR runs, its server and its nodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required")
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("unknown output format %q: use text or json", output)
			}
			st, err := cluster.GetStatus(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printStatus(out, st)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the cluster's directory (required)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func printStatus(out io.Writer, st cluster.Status) {
	switch {
	case !st.Running:
		fmt.Fprintf(out, "stopped (%s)\n", st.Dir)
	case !st.Ready:
		fmt.Fprintf(out, "starting (pid %d, %s)\n", st.PID, st.Dir)
	default:
		fmt.Fprintf(out, "running (pid %d, up %s)\nserver:     %s\nkubeconfig: %s\nnodes:      %d/%d Ready\n",
			st.PID, st.Uptime, st.Server, st.Kubeconfig, st.NodesReady, st.NodesTotal)
	}
	if st.Error != "" {
		fmt.Fprintf(out, "last error: %s\n", st.Error)
	}
}
