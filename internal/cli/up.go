package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/rehearsal"
)

const upLong = `Rehearse a GitOps bootstrap on a local cluster and follow it live.

up starts a local cluster (state in .wavecd/ under the current directory,
kubeconfig at .wavecd/kubeconfig; an existing one is reused, --fresh starts
from an empty one), installs the CRDs, applies the --settings (ConfigMaps and
Secrets, or an argo-cd Helm chart values file; without it an argocd-cm an
earlier run left is removed), runs the Application controller in this
process, serves --repo locally and applies the root manifest.

The cluster runs each pod as its own spec says: Ready after its
startupProbe and readinessProbe timings, crash-looping (CrashLoopBackOff,
the kubelet's back-off) while a Service its command, args or env names has no
ready endpoint, a Job's pod done after a short run time; admission webhooks
and APIServices backed by a Service answer only while it has a ready endpoint.
Services of apps not created yet count too: up renders the whole bootstrap
first. --profile names what a spec cannot say (node groups, CNI mode, images
that run a real process, workload overrides, an ingress controller), outside
the repository; --time-scale 0.1 runs every simulated delay ten times faster
and the timeline then shows the seconds at full scale as well.

Notifications configured in the settings (argocd-notifications-cm and
argocd-notifications-secret, Argo CD's format) are sent as the controller
would send them; the catalog's triggers and templates (on-deployed,
on-sync-failed, on-stalled, on-bootstrap-complete, ...) are added to an
argocd-notifications-cm that does not define them.

A folder that is not the root of a Git repository is committed as it is into
.wavecd/repo; a Git repository is read as committed; a URL is cloned. The
root Application keeps its repoURL: the controller mirrors that URL (and each
--mirror URL=PATH) to the local copy, so child Applications naming the same
URL resolve to it too.

The root manifest holds Applications, ApplicationSets (the EKS add-ons
style: add-ons generated over cluster Secrets, given in --settings), or
both, with AppProjects and other objects of the namespace. Each
ApplicationSet is generated here first, as the ApplicationSet controller
will generate it, so the repositories its Applications name (templated
from a cluster Secret's annotations, say) are mirrored too and its
Applications are waited for.

The timeline shows each app's sync and health changes, sync and wave starts,
what a wave waits on, and pod crashes and recoveries, stamped with the
seconds since the start. The controller's own log goes to
.wavecd/controller.log.

With --exit-when-settled, up exits 0 once every Application is Synced and
Healthy with no sync operation running (PostSync hooks included) for 2s, and
3 when nothing changes for --stall-after or --timeout passes; either way it
prints a summary table (app, wave, synced at, healthy at, pod restarts) and
leaves the cluster running for kubectl. Without it, up runs until Ctrl-C,
then stops the controller. "wavecd down" removes the cluster.

--listen serves /healthz and /readyz; metrics and the webhook are not served
by up yet.`

const upExample = `  # the health-check demo with Argo CD's documented fix (what make demo runs)
  cd examples/healthcheck-poc
  wavecd up --settings settings/app-health-lua.yaml --exit-when-settled

  # the same from an empty cluster, with Argo CD's default behaviour
  wavecd up --fresh --settings settings/argo-default.yaml --exit-when-settled

  # a repository as committed, Argo CD's settings in its argo-cd chart values,
  # ten times faster
  wavecd up --settings argocd-values.yaml --time-scale 0.1 --exit-when-settled

  # add-ons from an ApplicationSet over the cluster Secrets of a settings file
  wavecd up --root bootstrap/addons.yaml --settings clusters.yaml --exit-when-settled

  # a repository whose children also use another repository
  wavecd up --repo ../gitops --root bootstrap/root.yaml \
    --mirror https://github.com/org/charts.git=../charts`

func newUpCommand(s Streams) *cobra.Command {
	up := rehearsal.Up{}
	cmd := &cobra.Command{
		Use:     "up",
		Short:   "Rehearse a bootstrap on a local cluster and follow it live",
		Long:    upLong,
		Example: upExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("nodes") && up.Profile != "" {
				return errors.New("--nodes and --profile exclude each other: set node groups in the profile")
			}
			if up.TimeScale <= 0 {
				return fmt.Errorf("--time-scale %g: want a factor above 0, such as 0.1", up.TimeScale)
			}
			up.Out = s.Out
			up.RouteLogs = routeLogs
			return upExit(up.Run(cmd.Context()))
		},
	}
	f := cmd.Flags()
	f.StringVar(&up.Repo, "repo", ".", "the repository under test: a folder, a Git repository or a URL")
	f.StringVar(&up.Root, "root", "apps/root.yaml", "the root manifest, a path inside --repo: Applications and/or ApplicationSets")
	f.StringVar(&up.Settings, "settings", "", "argocd-cm and other settings (argocd-secret, argocd-notifications-cm and -secret, ...): a file of ConfigMaps and Secrets, or an argo-cd Helm chart values file")
	f.StringVar(&up.Profile, "profile", "", "rehearsal profile of the local cluster: node groups, CNI mode, images that run a process, workload overrides, ingress controller")
	f.Float64Var(&up.TimeScale, "time-scale", 1, "multiply every simulated delay (probes, back-off, run times, node start-up) by this factor, e.g. 0.1")
	f.StringArrayVar(&up.Mirrors, "mirror", nil, mirrorUsage)
	f.StringVar(&up.PluginsDir, "plugins-dir", "", pluginsDirUsage)
	f.IntVar(&up.Nodes, "nodes", 2, "simulated nodes of a new cluster without --profile")
	f.BoolVar(&up.Fresh, "fresh", false, "stop and remove an existing .wavecd first")
	f.BoolVar(&up.ExitWhenSettled, "exit-when-settled", false, "exit 0 once every app settled, 3 on a stall or timeout")
	f.DurationVar(&up.Timeout, "timeout", 10*time.Minute, "with --exit-when-settled, how long to wait in all")
	f.DurationVar(&up.StallAfter, "stall-after", 2*time.Minute, "how long nothing may change before the rehearsal counts as stalled")
	f.StringVar(&up.Listen, "listen", "", "serve /healthz and /readyz on this address, e.g. 127.0.0.1:8081")
	f.StringVar(&up.UI, "ui", "127.0.0.1:8080", "serve the web UI and API on this address (plain HTTP; \"\" for none)")
	return cmd
}

// upExit gives a rehearsal that did not settle its exit code.
func upExit(err error) error {
	var nse *rehearsal.NotSettledError
	if errors.As(err, &nse) {
		return &ExitError{Code: rehearsal.ExitNotSettled, Err: err}
	}
	return err
}

// routeLogs points the process-wide loggers at w, keeping the terminal
// for the timeline.
func routeLogs(w io.Writer) { setLoggers(w, slog.LevelInfo) }
