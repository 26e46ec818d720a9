package cli

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/source"
)

func newControllerCommand(s Streams) *cobra.Command {
	var kube kubeFlags
	var opts controller.Options
	var mirrors []string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Application controller against a cluster",
		Long: `Reconcile the Applications in --namespace: render their sources, compare
them with the cluster, write Argo CD's status, and run manual and automated
syncs with health-gated waves. Settings come from the argocd-cm ConfigMap in
the same namespace. Runs until interrupted.`,
		Example: `  wavecd controller --namespace argocd
  wavecd controller --kubeconfig .wavecd/kubeconfig --mirror https://github.com/org/repo.git=./repo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(s.Err, &slog.HandlerOptions{Level: level})))
			opts.Mirrors = source.Mirrors{}
			for _, m := range mirrors {
				url, path, err := source.ParseMirror(m)
				if err != nil {
					return fmt.Errorf("--mirror %q: %w", m, err)
				}
				opts.Mirrors.Add(url, path)
			}
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			ctrl, err := controller.New(cfg, opts)
			if err != nil {
				return err
			}
			slog.Info("controller starting", "namespace", opts.Namespace)
			return ctrl.Start(cmd.Context())
		},
	}
	kube.addTo(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&opts.Namespace, "namespace", "n", "argocd", "namespace of the Applications, AppProjects and argocd-cm")
	f.BoolVar(&opts.ArgoParity, "argo-parity", false, "behave like Argo CD: no child Application health, no generic condition check")
	f.StringArrayVar(&mirrors, "mirror", nil, "serve a repository URL from a local path (URL=PATH, repeatable)")
	f.StringVar(&opts.HealthLibraryDir, "health-library", "", "directory of Lua health checks in Argo CD's resource_customizations layout")
	f.StringVar(&opts.CacheDir, "cache-dir", "", "directory for Git clones (default: the user cache directory)")
	f.BoolVar(&opts.LeaderElection, "leader-elect", true, "elect one active controller among replicas")
	f.IntVar(&opts.Workers, "workers", 10, "parallel reconciles")
	f.BoolVarP(&verbose, "verbose", "v", false, "log every sync step")
	return cmd
}
