package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
)

const appListExample = `  # list every app in the argocd namespace
  wavecd app list

  # the children of an app-of-apps root
  wavecd app list -l app.kubernetes.io/instance=root

  # apps of project team-a that are not healthy, by name only
  wavecd app list -p team-a --health degraded -o name`

func newAppListCommand(s Streams, f *appFlags) *cobra.Command {
	a := &appclient.List{}
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List applications",
		Long: `List the Applications of a namespace with their sync and health status,
like argocd app list. Filters combine: an app must match all of them.`,
		Example: appListExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output, "wide", "name", "json", "yaml"); err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			a.Client = c
			res, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			return printAppList(s.Out, output, res)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "wide", "output format: wide, name, json or yaml")
	fl.StringArrayVarP(&a.Projects, "project", "p", nil, "only apps of this project (repeatable)")
	fl.StringVarP(&a.Selector, "selector", "l", "", "only apps matching this label selector (=, ==, !=, in, notin, exists)")
	fl.StringVar(&a.Health, "health", "", "only apps with this health: "+strings.Join(appclient.HealthStatuses, ", "))
	fl.StringVar(&a.Sync, "sync", "", "only apps with this sync status: "+strings.Join(appclient.SyncStatuses, ", "))
	fl.StringVarP(&a.Repo, "repo", "r", "", "only apps with a source from this repository URL")
	fl.StringVarP(&a.Cluster, "cluster", "c", "", "only apps deploying to this cluster (server URL or name)")
	return cmd
}

func printAppList(w io.Writer, output string, res *appclient.ListResult) error {
	switch output {
	case "name":
		for _, app := range res.Apps {
			fmt.Fprintln(w, qualifiedName(&app))
		}
		return nil
	case "json", "yaml":
		items := make([]any, len(res.Raw))
		for i, u := range res.Raw {
			items[i] = cleanRaw(u).Object
		}
		return printStructured(w, output, items)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tCLUSTER\tNAMESPACE\tPROJECT\tSTATUS\tHEALTH\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
	for _, app := range res.Apps {
		src := firstSource(&app)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			qualifiedName(&app), destinationCluster(&app), app.Spec.Destination.Namespace, app.Spec.Project,
			app.Status.Sync.Status, app.Status.Health.Status, syncPolicySummary(&app), conditionsSummary(&app),
			src.RepoURL, src.Path, src.TargetRevision)
	}
	return tw.Flush()
}

// cleanRaw drops managedFields, as kubectl does by default.
func cleanRaw(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u
}

func qualifiedName(app *v1alpha1.Application) string {
	return app.Namespace + "/" + app.Name
}

func destinationCluster(app *v1alpha1.Application) string {
	if app.Spec.Destination.Server != "" {
		return app.Spec.Destination.Server
	}
	return app.Spec.Destination.Name
}

func firstSource(app *v1alpha1.Application) v1alpha1.ApplicationSource {
	if sources := app.Spec.GetSources(); len(sources) > 0 {
		return sources[0]
	}
	return v1alpha1.ApplicationSource{}
}

// syncPolicySummary is Argo CD's SYNCPOLICY column: Manual, Auto or
// Auto-Prune.
func syncPolicySummary(app *v1alpha1.Application) string {
	if !app.Spec.SyncPolicy.IsAutomated() {
		return "Manual"
	}
	if app.Spec.SyncPolicy.Automated.Prune {
		return "Auto-Prune"
	}
	return "Auto"
}

// conditionsSummary counts conditions by type: `A,B(2)` or `<none>`.
func conditionsSummary(app *v1alpha1.Application) string {
	counts := map[string]int{}
	for _, c := range app.Status.Conditions {
		counts[c.Type]++
	}
	if len(counts) == 0 {
		return "<none>"
	}
	items := make([]string, 0, len(counts))
	for t, n := range counts {
		if n > 1 {
			t = fmt.Sprintf("%s(%d)", t, n)
		}
		items = append(items, t)
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}
