package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	sigsjson "sigs.k8s.io/json"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appset"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

func newAppsetCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "appset",
		Aliases: []string{"applicationset", "appsets"},
		Short:   "Work with ApplicationSets",
	}
	cmd.AddCommand(newAppsetGenerateCommand(s))
	return cmd
}

func newAppsetGenerateCommand(s Streams) *cobra.Command {
	a := &appsetGenerate{out: s.Out, errOut: s.Err}
	cmd := &cobra.Command{
		Use:   "generate FILE",
		Short: "Print the Applications an ApplicationSet would make, without a cluster",
		Long: `Run the generators and the template of every ApplicationSet in FILE (YAML or
JSON, several documents allowed; - reads stdin) and print the Applications
they would make, as argocd appset generate does, but offline: nothing is
created, and no wavecd or Argo CD server is needed.

Git generators read the repository (a --mirror serves its URL from a local
folder). Cluster generators see the in-cluster destination and the cluster
Secrets of --settings (a file of ConfigMaps and Secrets, or an argo-cd Helm
chart values file), or, with --kubeconfig or --context, the cluster Secrets
in the namespace -n of that cluster. Plugin generators are called: their
ConfigMap and token Secret come from the same place.`,
		Example: `  wavecd appset generate appsets/addons.yaml
  wavecd appset generate appsets/addons.yaml --settings clusters.yaml -o yaml
  wavecd appset generate appset.yaml --mirror https://github.com/org/gitops.git=. -o json
  wavecd appset generate appset.yaml --context prod -n argocd`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.File = args[0]
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&a.Output, "output", "o", "wide", "output format: wide, yaml or json")
	f.StringVar(&a.Settings, "settings", "", "Argo CD settings whose cluster Secrets the cluster generators see (and plugin generators' ConfigMaps and Secrets): ConfigMaps and Secrets, or an argo-cd Helm chart values file")
	a.kube.addTo(f, "namespace of the cluster Secrets, with --kubeconfig or --context")
	f.StringArrayVar(&a.Mirrors, "mirror", nil, mirrorUsage)
	f.StringVar(&a.CacheDir, "cache-dir", "", "folder for Git clones (default: a folder in the user cache dir)")
	f.BoolVar(&a.NewGitFileGlobbing, "enable-new-git-file-globbing", false, "git files generator paths: * stays within one path segment, ** crosses them (Argo CD's flag of that name)")
	return cmd
}

// appsetGenerate is `wavecd appset generate`.
type appsetGenerate struct {
	out, errOut        io.Writer
	File               string
	Output             string
	Settings           string
	kube               namespaceFlags
	Mirrors            []string
	CacheDir           string
	NewGitFileGlobbing bool
}

// generatedSet is one ApplicationSet of the file and what it made.
type generatedSet struct {
	Name string
	Apps []v1alpha1.Application
}

// Run generates every set of the file and prints the Applications.
func (a *appsetGenerate) Run(ctx context.Context) error {
	if err := validateOutput(a.Output, "wide", "yaml", "json"); err != nil {
		return err
	}
	sets, err := a.readSets()
	if err != nil {
		return err
	}
	clusters, objects, resources, err := a.clusters()
	if err != nil {
		return err
	}
	mirrors, err := parseMirrorFlags(a.Mirrors)
	if err != nil {
		return err
	}
	cacheDir, err := (&renderAction{CacheDir: a.CacheDir}).cacheDir()
	if err != nil {
		return err
	}
	in := appset.Inputs{
		Repos:              source.NewRepos(source.ReposOptions{CacheDir: cacheDir, Mirrors: mirrors}),
		Clusters:           clusters,
		Objects:            objects,
		Resources:          resources,
		NewGitFileGlobbing: a.NewGitFileGlobbing,
	}
	var out []generatedSet
	for _, set := range sets {
		g, err := appset.Generate(ctx, set, in)
		if err != nil {
			return fmt.Errorf("%s: ApplicationSet %s: %w", a.File, set.Name, err)
		}
		out = append(out, generatedSet{Name: set.Name, Apps: g.Apps})
	}
	return printGenerated(a.out, a.Output, out)
}

// readSets decodes the ApplicationSets of the file; other objects are
// left out with a warning, unknown fields are warned about.
func (a *appsetGenerate) readSets() ([]*v1alpha1.ApplicationSet, error) {
	data, err := readInput(a.File)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var sets []*v1alpha1.ApplicationSet
	for i := 1; ; i++ {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", a.File, i, err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
			continue
		}
		set, err := a.decodeSet(i, raw.Raw)
		if err != nil {
			return nil, err
		}
		if set != nil {
			sets = append(sets, set)
		}
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%s holds no argoproj.io ApplicationSet", a.File)
	}
	return sets, nil
}

// decodeSet decodes document i; nil (and a warning) when it is not an
// ApplicationSet.
func (a *appsetGenerate) decodeSet(i int, raw []byte) (*v1alpha1.ApplicationSet, error) {
	var head unstructured.Unstructured
	if err := head.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%s: document %d: %w", a.File, i, err)
	}
	gvk := head.GroupVersionKind()
	if gvk.Group != v1alpha1.Group || gvk.Kind != "ApplicationSet" {
		fmt.Fprintf(a.errOut, "warning: %s: document %d: %s %s is not an ApplicationSet; left out\n", a.File, i, gvk.Kind, head.GetName())
		return nil, nil
	}
	set := &v1alpha1.ApplicationSet{}
	strict, err := sigsjson.UnmarshalStrict(raw, set, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: ApplicationSet %s: %w", a.File, head.GetName(), err)
	}
	for _, e := range strict {
		fmt.Fprintf(a.errOut, "warning: %s: ApplicationSet %s: %v (ignored)\n", a.File, set.Name, e)
	}
	if set.Namespace == "" {
		set.Namespace = a.kube.namespace
	}
	return set, nil
}

// clusters are what the cluster generators see: the cluster Secrets of
// --settings, of the kubeconfig's cluster, or only the in-cluster
// destination; objects are the ConfigMaps and Secrets the plugin and
// cluster-decision-resource generators read, from the same place (none
// without either), and resources the latter's resources (a cluster only).
func (a *appsetGenerate) clusters() (appset.Clusters, appset.Objects, appset.Resources, error) {
	if a.Settings != "" && (a.kube.kube.kubeconfig != "" || a.kube.kube.context != "") {
		return nil, nil, nil, errors.New("give the clusters either with --settings or with --kubeconfig/--context, not both")
	}
	if a.kube.kube.kubeconfig != "" || a.kube.kube.context != "" {
		cfg, c, err := a.kube.connect()
		if err != nil {
			return nil, nil, nil, err
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
		return cluster.Registry{Reader: c, Namespace: a.kube.namespace}, appset.KubeObjects{Reader: c}, appset.KubeResources{Client: dyn}, nil
	}
	if a.Settings == "" {
		return cluster.Static{*cluster.InCluster()}, nil, nil, nil
	}
	s, err := settings.Load(a.Settings, settings.Options{Namespace: a.kube.namespace})
	if err != nil {
		return nil, nil, nil, err
	}
	clusters, objects, err := appset.FromSettings(s)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("settings %s: %w", a.Settings, err)
	}
	return clusters, objects, nil, nil
}

// printGenerated prints the generated Applications: a table (wide), or
// the Applications themselves.
func printGenerated(w io.Writer, format string, sets []generatedSet) error {
	if format == "wide" {
		return printGeneratedTable(w, sets)
	}
	apps := []map[string]any{}
	for _, s := range sets {
		for i := range s.Apps {
			app := s.Apps[i].DeepCopy()
			app.APIVersion, app.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.ApplicationKind
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
			if err != nil {
				return fmt.Errorf("application %s: %w", app.Name, err)
			}
			delete(obj, "status") // a generated app has none yet
			apps = append(apps, obj)
		}
	}
	if format == "json" {
		return printStructured(w, "json", apps)
	}
	for i := range apps {
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if err := printStructured(w, "yaml", apps[i]); err != nil {
			return err
		}
	}
	return nil
}

// printGeneratedTable prints one row per generated Application.
func printGeneratedTable(w io.Writer, sets []generatedSet) error {
	t := newTable(w)
	fmt.Fprintln(t, "APPLICATIONSET\tNAME\tPROJECT\tSOURCE\tDESTINATION\tNAMESPACE")
	for _, s := range sets {
		for _, app := range s.Apps {
			fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, app.Name, app.Spec.Project, sourceSummary(&app.Spec),
				destinationSummary(app.Spec.Destination), app.Spec.Destination.Namespace)
		}
	}
	return t.Flush()
}

// sourceSummary is REPO/PATH (or REPO CHART@VERSION) of the first source,
// with "+N" for more.
func sourceSummary(spec *v1alpha1.ApplicationSpec) string {
	srcs := spec.GetSources()
	if len(srcs) == 0 {
		return ""
	}
	s := srcs[0]
	out := s.RepoURL
	switch {
	case s.Chart != "":
		out += " " + s.Chart + "@" + s.TargetRevision
	case s.Path != "":
		out += "/" + strings.TrimPrefix(s.Path, "/")
	}
	if len(srcs) > 1 {
		out += fmt.Sprintf(" +%d", len(srcs)-1)
	}
	return out
}

func destinationSummary(d v1alpha1.ApplicationDestination) string {
	if d.Name != "" {
		return d.Name
	}
	return d.Server
}
