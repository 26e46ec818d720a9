package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/rehearsal"
)

const rehearseLong = `Run one scenario of a bootstrap on fresh local clusters and say whether it
converges or deadlocks, and why.

DIR is a repository with a scenarios/ folder. A scenario (scenarios/NAME.yaml)
is a value file of the root Application's Helm chart whose rehearsal: key says
which settings (argocd-cm, or an argo-cd Helm chart values file) to apply,
which profile the local cluster runs with (node groups, CNI mode, images that
run a process such as Karpenter's, workload overrides, an ingress controller),
which files from bin/ to add to the served snapshot (such as Karpenter's CRDs)
and which values to draw at random for each run.

Pods behave as their own specs say: Ready after their probes, crash-looping
while a Service their command names has no ready endpoint; webhooks and
aggregated APIs answer only while their Service has one. --time-scale 0.1
runs every such delay ten times faster.

Each run starts a new local cluster in its own folder under --workspace,
serves a snapshot of DIR, runs the Application controller in this process
with the stall timeout, applies the root Application with the scenario's value
file, prints the timeline and stops the cluster. A run converges when every
Application is Synced and Healthy with no sync running; it stalls when a sync
wave made no progress for the stall timeout while pods it waits on cannot be
scheduled (the app's SyncStalled condition says which wave, which pods, the
scheduler's reason and where the node provisioner is), or when nothing changes
at all.

The summary gives the verdict, the reason, each app's wave and times, and the
nodes; --report writes a self-contained HTML page with the same and a timeline
chart. With --runs N the runs use seeds --seed, --seed+1, ... and the summary
counts the verdicts.

Exit codes: 0 when every run converged, 3 when one did not.`

const rehearseExample = `  # the deadlock: app health gates, Calico in wave 0, Karpenter in wave 1
  wavecd rehearse examples/calico-karpenter --scenario health-gated --report health-gated.html

  # the fix: a 2-node static node group where Calico runs
  wavecd rehearse examples/calico-karpenter --scenario static-nodes

  # how often a race is won, over 10 runs
  wavecd rehearse examples/calico-karpenter --scenario no-health-lbc --runs 10 -o json`

func newRehearseCommand(s Streams) *cobra.Command {
	r := rehearsal.Rehearse{}
	var output string
	cmd := &cobra.Command{
		Use:     "rehearse DIR --scenario NAME",
		Short:   "Run a bootstrap scenario on fresh local clusters and report whether it converges",
		Long:    rehearseLong,
		Example: rehearseExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch output {
			case "", "text":
			case "json":
				r.JSON = true
			default:
				return fmt.Errorf("--output %q: want text or json", output)
			}
			if r.TimeScale <= 0 {
				return fmt.Errorf("--time-scale %g: want a factor above 0, such as 0.1", r.TimeScale)
			}
			r.Dir, r.Out, r.RouteLogs = args[0], s.Out, routeLogs
			_, err := r.Run(cmd.Context())
			return rehearseExit(err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.Scenario, "scenario", "", "the scenario: scenarios/NAME.yaml of DIR")
	f.IntVar(&r.Runs, "runs", 1, "how many runs, each on a new cluster")
	f.StringVar(&r.Settings, "settings", "", "Argo CD settings (ConfigMaps and Secrets, or an argo-cd Helm chart values file), in place of the scenario's")
	f.StringVar(&r.Profile, "profile", "", "rehearsal profile of the local cluster, in place of the scenario's")
	f.Float64Var(&r.TimeScale, "time-scale", 1, "multiply every simulated delay (probes, back-off, run times, node start-up) by this factor, e.g. 0.1")
	f.Int64Var(&r.Seed, "seed", 1, "the first run's seed (values the scenario randomizes)")
	f.StringVar(&r.Report, "report", "", "write a self-contained HTML report to this file")
	f.StringVar(&r.PluginsDir, "plugins-dir", "", pluginsDirUsage)
	f.StringArrayVar(&r.Mirrors, "mirror", nil, mirrorUsage)
	f.DurationVar(&r.StallTimeout, "stall-timeout", rehearsal.DefaultRehearseStallTimeout,
		"how long a sync wave may make no progress before the controller examines it as a stall")
	f.DurationVar(&r.Timeout, "timeout", rehearsal.DefaultRehearseTimeout, "how long a run may take after the root is applied")
	f.StringVar(&r.Workspace, "workspace", ".wavecd/rehearse", "folder holding one folder per run")
	f.StringVarP(&output, "output", "o", "text", "text, or json for the report as JSON")
	_ = cmd.MarkFlagRequired("scenario")
	return cmd
}

// rehearseExit gives a rehearsal with runs that did not converge its exit
// code.
func rehearseExit(err error) error {
	var nce *rehearsal.NotConvergedError
	if errors.As(err, &nce) {
		return &ExitError{Code: rehearsal.ExitNotSettled, Err: err}
	}
	return err
}
