package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/plugin"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

const renderLong = `Render an Application's manifests the way Argo CD would, without a cluster.

With -f, read an Application manifest and render its source (or sources).
Repository URLs are fetched into the cache folder, or read from a mirror:
--mirror https://github.com/org/repo=./repo maps a URL to a local folder or
Git repository, so apps that name remote repositories render offline.

Without -f, render the folder --repo at --path as it is on disk (or, with
--revision, the commit that revision names). --helm-set and --values add
Helm parameters and value files (value files are paths in the repository,
relative to --path, as in spec.source.helm.valueFiles).

--settings reads Argo CD's settings as the controller would (argocd-cm and
the other ConfigMaps and Secrets, or an argo-cd Helm chart values file):
its kustomize.buildOptions apply, its wavecd.mirrors serve repositories
locally (--mirror wins), its health customizations are compiled, and what
render cannot use is named in a warning.

Helm charts see .Capabilities as Argo CD hands them: with --kubeconfig (or
--context) the cluster's version and every group/version and
group/version/Kind it serves, so a chart that tests for a CRD or an API
(policy/v1/PodDisruptionBudget, monitoring.coreos.com/v1/ServiceMonitor)
renders as it would there; --kube-version and --api-versions set them
instead (they win over the cluster's). Without either, Helm's defaults
apply. An Application's helm.kubeVersion and helm.apiVersions win over all.

Objects print sorted by group, kind, namespace and name. Files skipped on
purpose (they parse but hold no Kubernetes object, or are symlinks not
followed) are listed as warnings; a file that does not parse is an error
naming the file and line.

Renders are bounded as the controller bounds them: one document 3Mi
(reposerver.max.manifest.size), the files of a Directory source 10M
(reposerver.max.combined.directory.manifests.size), an app's rendered output
50M (reposerver.max.combined.manifests.size); --limit KEY=SIZE changes one,
as the same key in argocd-cm (or in --settings) does for the controller.`

const renderExample = `  # render as the controller would for the cluster of the current kubeconfig
  # context: its Kubernetes version and every API version it serves
  wavecd render -f apps/karpenter.yaml --kubeconfig ~/.kube/config

  # render an app-of-apps root whose repository is mirrored locally
  wavecd render -f root-app.yaml --mirror https://github.com/acme/seed=./seed

  # render a chart in a local folder with a parameter
  wavecd render --repo . --path charts/app-a --helm-set replicaCount=2 -o json

  # with the settings of an argo-cd Helm chart values file
  wavecd render -f root-app.yaml --settings argocd-values.yaml`

// renderAction renders an Application (from a file or from flags).
type renderAction struct {
	out, errOut interface{ Write([]byte) (int, error) }

	File        string
	Mirrors     []string
	Output      string
	CacheDir    string
	Repo        string
	Path        string
	Revision    string
	Name        string
	Namespace   string
	HelmSets    []string
	ValueFiles  []string
	KubeVersion string
	APIVersions []string
	PluginsDir  string
	Type        string
	Settings    string
	// Limits are argocd-cm render limits, KEY=SIZE.
	Limits []string
	// kube reaches the cluster whose capabilities Helm sees, when
	// ReadCluster says --kubeconfig or --context was given.
	kube        kubeFlags
	ReadCluster bool
}

func newRenderCommand(s Streams) *cobra.Command {
	a := &renderAction{out: s.Out, errOut: s.Err}
	cmd := &cobra.Command{
		Use:     "render (-f APP.yaml | --repo DIR --path PATH)",
		Short:   "Render an Application's manifests locally",
		Long:    renderLong,
		Example: renderExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.ReadCluster = cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	a.kube.addTo(f)
	f.StringVarP(&a.File, "filename", "f", "", "Application manifest to render (- for standard input)")
	f.StringArrayVar(&a.Mirrors, "mirror", nil, mirrorUsage)
	f.StringVarP(&a.Output, "output", "o", "yaml", "output format: yaml or json")
	f.StringVar(&a.CacheDir, "cache-dir", "", "folder for fetched repositories (default: the user cache folder)")
	f.StringVar(&a.Repo, "repo", "", "render this local folder instead of an Application file")
	f.StringVar(&a.Path, "path", "", "path of the source inside --repo")
	f.StringVar(&a.Revision, "revision", "", "with --repo: render this Git revision instead of the folder on disk")
	f.StringVar(&a.Name, "name", "", "with --repo: application name, the default Helm release name (default: last element of --path)")
	f.StringVarP(&a.Namespace, "namespace", "n", "", "with --repo: destination namespace")
	f.StringArrayVar(&a.HelmSets, "helm-set", nil, "with --repo: Helm parameter NAME=VALUE (repeatable)")
	f.StringArrayVar(&a.ValueFiles, "values", nil, "with --repo: Helm value file in the repository, relative to --path (repeatable)")
	f.StringArrayVar(&a.Limits, "limit", nil, "raise or lower a render limit as argocd-cm would: KEY=SIZE, e.g. "+render.KeyMaxDirectorySize+"=50M (repeatable)")
	f.StringVar(&a.KubeVersion, "kube-version", "", "Kubernetes version for Helm's .Capabilities (default: the cluster's with --kubeconfig, else Helm's)")
	f.StringSliceVar(&a.APIVersions, "api-versions", nil, "API versions for Helm's .Capabilities, group/version or group/version/Kind (repeatable or comma-separated; default: every one the cluster serves with --kubeconfig, else Helm's built-in list)")
	f.StringVar(&a.PluginsDir, "plugins-dir", "", pluginsDirUsage)
	f.StringVar(&a.Settings, "settings", "", "Argo CD settings, as for up: ConfigMaps and Secrets, or an argo-cd Helm chart values file")
	f.StringVar(&a.Type, "type", "", "with --repo: render as helm, kustomize, directory or plugin:NAME instead of detecting the type")
	return cmd
}

// pluginsDirUsage describes --plugins-dir on every command that renders.
const pluginsDirUsage = "folder of Config Management Plugins: ConfigManagementPlugin files run by this process, and <name>.sock sockets of plugin sidecars"

// Run renders and prints.
func (a *renderAction) Run(ctx context.Context) error {
	if err := validateOutput(a.Output, "yaml", "json"); err != nil {
		return err
	}
	if (a.File == "") == (a.Repo == "") {
		return fmt.Errorf("give either -f APP.yaml or --repo DIR")
	}
	data, mirrors, err := a.readSettings()
	if err != nil {
		return err
	}
	flagMirrors, err := parseMirrorFlags(a.Mirrors)
	if err != nil {
		return err
	}
	for url, path := range flagMirrors {
		mirrors[url] = path
	}
	cacheDir, err := a.cacheDir()
	if err != nil {
		return err
	}
	var plugins *plugin.Set
	if a.PluginsDir != "" {
		plugins = plugin.NewSet(plugin.SetOptions{Dir: a.PluginsDir})
	}
	engine := render.NewEngine(render.EngineOptions{
		Repos:   source.NewRepos(source.ReposOptions{CacheDir: cacheDir, Mirrors: mirrors}),
		Charts:  source.NewCharts(source.ChartsOptions{Mirrors: mirrors}),
		Plugins: plugins,
	})
	caps, err := a.capabilities()
	if err != nil {
		return err
	}
	opts := render.AppOptions{Capabilities: caps}
	if a.Settings != "" {
		opts.Kustomize = render.KustomizeSettingsFrom(data)
	}
	if opts.Limits, err = a.limits(data); err != nil {
		return err
	}
	var res *render.Result
	if a.File != "" {
		res, err = a.renderFile(ctx, engine, opts)
	} else {
		res, err = a.renderRepo(ctx, engine, opts)
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(a.errOut, "warning: %s\n", w)
	}
	return printObjects(a.out, a.Output, res.Objects)
}

func (a *renderAction) cacheDir() (string, error) {
	if a.CacheDir != "" {
		return a.CacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a cache folder (set --cache-dir): %w", err)
	}
	return filepath.Join(dir, "wavecd"), nil
}

// mirrorUsage describes --mirror on every command that takes it.
const mirrorUsage = "serve a repository URL from a local path or an OCI registry: URL=PATH or URL=oci://HOST/PATH (repeatable)"

func parseMirrorFlags(flags []string) (source.Mirrors, error) {
	m := source.Mirrors{}
	for _, f := range flags {
		if err := m.AddFlag(f); err != nil {
			return nil, fmt.Errorf("flag --mirror: %w", err)
		}
	}
	return m, nil
}

// limits reads the render limits of settings (argocd-cm's data, nil
// without --settings), then --limit KEY=SIZE flags over them.
func (a *renderAction) limits(settings map[string]string) (render.Limits, error) {
	data := map[string]string{}
	for _, k := range []string{render.KeyMaxManifestSize, render.KeyMaxDirectorySize, render.KeyMaxAppSize} {
		if v, ok := settings[k]; ok {
			data[k] = v
		}
	}
	for _, kv := range a.Limits {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains([]string{render.KeyMaxManifestSize, render.KeyMaxDirectorySize, render.KeyMaxAppSize}, k) {
			return render.Limits{}, fmt.Errorf("flag --limit %q: want KEY=SIZE with KEY one of %s, %s, %s",
				kv, render.KeyMaxManifestSize, render.KeyMaxDirectorySize, render.KeyMaxAppSize)
		}
		data[k] = v
	}
	return render.ParseLimits(data)
}

func (a *renderAction) renderFile(ctx context.Context, engine *render.Engine, opts render.AppOptions) (*render.Result, error) {
	app, err := loadApplication(a.File)
	if err != nil {
		return nil, err
	}
	for _, w := range app.Warnings {
		fmt.Fprintf(a.errOut, "warning: %s\n", w)
	}
	res, err := engine.RenderAppWith(ctx, app.Application, opts)
	if err != nil {
		return nil, app.locate(err)
	}
	return res, nil
}

// renderRepo renders --repo/--path: the folder as it is, or a revision.
func (a *renderAction) renderRepo(ctx context.Context, engine *render.Engine, opts render.AppOptions) (*render.Result, error) {
	src, err := a.source()
	if err != nil {
		return nil, err
	}
	name := a.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(filepath.Join(a.Repo, a.Path)))
	}
	if a.Revision != "" {
		app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: src}}
		app.Name, app.Spec.Destination.Namespace = name, a.Namespace
		return engine.RenderAppWith(ctx, app, opts)
	}
	tree, err := source.ReadDir(ctx, a.Repo)
	if err != nil {
		return nil, err
	}
	return engine.Render(ctx, &render.Request{AppName: name, Namespace: a.Namespace, Source: *src, Tree: tree, Capabilities: opts.Capabilities, Kustomize: opts.Kustomize, Limits: opts.Limits})
}

func (a *renderAction) source() (*v1alpha1.ApplicationSource, error) {
	src := &v1alpha1.ApplicationSource{RepoURL: a.Repo, Path: a.Path, TargetRevision: a.Revision}
	if err := setType(src, a.Type); err != nil {
		return nil, err
	}
	if len(a.HelmSets) == 0 && len(a.ValueFiles) == 0 {
		return src, nil
	}
	if src.Helm == nil {
		src.Helm = &v1alpha1.ApplicationSourceHelm{}
	}
	src.Helm.ValueFiles = a.ValueFiles
	for _, s := range a.HelmSets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("flag --helm-set %q: want NAME=VALUE", s)
		}
		src.Helm.Parameters = append(src.Helm.Parameters, v1alpha1.HelmParameter{Name: k, Value: v})
	}
	return src, nil
}

// setType forces the source type --type names.
func setType(src *v1alpha1.ApplicationSource, typ string) error {
	switch name, isPlugin := strings.CutPrefix(typ, "plugin:"); {
	case typ == "":
	case typ == "helm":
		src.Helm = &v1alpha1.ApplicationSourceHelm{}
	case typ == "kustomize":
		src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
	case typ == "directory":
		src.Directory = &v1alpha1.ApplicationSourceDirectory{}
	case typ == "plugin" || isPlugin:
		src.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: name}
	default:
		return fmt.Errorf("flag --type %q: want helm, kustomize, directory, plugin or plugin:NAME", typ)
	}
	return nil
}

// readSettings reads --settings: its warnings go to stderr, its health
// customizations are compiled (one that does not compile is a warning, as
// the controller then reads its kind's health Unknown); it returns
// argocd-cm's data and its mirrors (wavecd.mirrors).
func (a *renderAction) readSettings() (map[string]string, source.Mirrors, error) {
	if a.Settings == "" {
		return nil, source.Mirrors{}, nil
	}
	s, err := settings.Load(a.Settings, settings.Options{Namespace: "argocd"})
	if err != nil {
		return nil, nil, err
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.errOut, "warning: settings %s\n", w)
	}
	data := s.Data(settings.ConfigMap)
	if _, err := health.ParseSettings(data); err != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", a.Settings, err)
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if strings.HasPrefix(k, health.KeyHealthPrefix) {
			if err := health.NewScript(k, data[k], false).Err(); err != nil {
				fmt.Fprintf(a.errOut, "warning: settings %s: %s key %s: %v (its kind's health reads Unknown)\n", a.Settings, settings.ConfigMap, k, err)
			}
		}
	}
	mirrors := source.Mirrors{}
	if v := data[source.MirrorsConfigKey]; v != "" {
		if mirrors, err = source.ParseMirrorsConfig(v); err != nil {
			return nil, nil, fmt.Errorf("settings %s: %s key %s: %w", a.Settings, settings.ConfigMap, source.MirrorsConfigKey, err)
		}
	}
	return data, mirrors, nil
}
