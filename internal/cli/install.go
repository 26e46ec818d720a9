package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/wavecd/wavecd/internal/install"
)

func newInstallCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install wavecd's prerequisites into a cluster",
	}
	cmd.AddCommand(newInstallCRDsCommand(s))
	return cmd
}

func newInstallCRDsCommand(s Streams) *cobra.Command {
	var kube kubeFlags
	var output string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "crds",
		Short: "Apply the Application, ApplicationSet and AppProject CRDs",
		Long: `Apply the argoproj.io/v1alpha1 CRDs (Application, ApplicationSet, AppProject)
with server-side apply and wait until they are Established.

A CRD that an Argo CD installation owns (label app.kubernetes.io/part-of=argocd)
is left as it is and used: wavecd reads the same Applications Argo CD does.
Unknown fields in Argo CD manifests are preserved, not pruned.`,
		Example: `  wavecd install crds
  wavecd install crds --kubeconfig .wavecd/kubeconfig -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateOutput(output, "text", "json", "yaml"); err != nil {
				return err
			}
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			client, err := apiextensions.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("build client: %w", err)
			}
			results, err := install.InstallCRDs(cmd.Context(), client, install.CRDOptions{Timeout: timeout})
			if err != nil {
				return err
			}
			if output != "text" {
				return printStructured(s.Out, output, results)
			}
			w := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CRD\tACTION")
			for _, r := range results {
				fmt.Fprintf(w, "%s\t%s\n", r.Name, r.Action)
			}
			return w.Flush()
		},
	}
	kube.addTo(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for each CRD to be Established")
	return cmd
}
