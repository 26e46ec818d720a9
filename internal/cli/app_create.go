package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
)

// specFlags are the spec flags `app create` and `app set` share.
type specFlags struct {
	repo, path, revision, chart         string
	destServer, destName, destNamespace string
	project, syncPolicy                 string
	autoPrune, selfHeal, allowEmpty     bool
	syncOptions                         []string
}

func (f *specFlags) addTo(fs *pflag.FlagSet) {
	fs.StringVar(&f.repo, "repo", "", "repository URL (Git, Helm or oci://)")
	fs.StringVar(&f.path, "path", "", "path of the app in the Git repository")
	fs.StringVar(&f.revision, "revision", "", "branch, tag or commit to track (Git), or chart version (Helm)")
	fs.StringVar(&f.chart, "helm-chart", "", "chart name in a Helm repository")
	fs.StringVar(&f.destServer, "dest-server", "", "destination cluster URL, e.g. https://kubernetes.default.svc")
	fs.StringVar(&f.destName, "dest-name", "", "destination cluster name (instead of --dest-server)")
	fs.StringVar(&f.destNamespace, "dest-namespace", "", "destination namespace")
	fs.StringVar(&f.project, "project", "", "AppProject (create: default \"default\")")
	fs.StringVar(&f.syncPolicy, "sync-policy", "", "automated (also auto, automatic) or none (also manual)")
	fs.BoolVar(&f.autoPrune, "auto-prune", false, "with automated sync: delete objects no longer in Git")
	fs.BoolVar(&f.selfHeal, "self-heal", false, "with automated sync: undo changes made in the cluster")
	fs.BoolVar(&f.allowEmpty, "allow-empty", false, "with automated sync: allow syncing to no objects at all")
	fs.StringArrayVar(&f.syncOptions, "sync-option", nil, "add a sync option such as CreateNamespace=true; !OPTION removes it (repeatable)")
}

// options returns the flags the user set, so unset ones leave the spec
// alone.
func (f *specFlags) options(fs *pflag.FlagSet) appclient.AppOptions {
	str := func(name string, v *string) *string {
		if fs.Changed(name) {
			return v
		}
		return nil
	}
	boolean := func(name string, v *bool) *bool {
		if fs.Changed(name) {
			return v
		}
		return nil
	}
	return appclient.AppOptions{
		Repo: str("repo", &f.repo), Path: str("path", &f.path), Revision: str("revision", &f.revision),
		Chart: str("helm-chart", &f.chart), DestServer: str("dest-server", &f.destServer),
		DestName: str("dest-name", &f.destName), DestNamespace: str("dest-namespace", &f.destNamespace),
		Project: str("project", &f.project), SyncPolicy: str("sync-policy", &f.syncPolicy),
		AutoPrune: boolean("auto-prune", &f.autoPrune), SelfHeal: boolean("self-heal", &f.selfHeal),
		AllowEmpty: boolean("allow-empty", &f.allowEmpty), SyncOptions: f.syncOptions,
	}
}

const appCreateExample = `  # a directory app
  wavecd app create guestbook --repo https://github.com/argoproj/argocd-example-apps.git \
    --path guestbook --dest-server https://kubernetes.default.svc --dest-namespace default

  # with automated sync that prunes and self-heals
  wavecd app create guestbook --repo https://github.com/argoproj/argocd-example-apps.git \
    --path guestbook --dest-server https://kubernetes.default.svc --dest-namespace default \
    --sync-policy automated --auto-prune --self-heal --sync-option CreateNamespace=true

  # from a manifest (several documents allowed; - reads standard input)
  wavecd app create -f app.yaml --upsert`

// createFlags are the flags only `app create` has.
type createFlags struct {
	file         string
	labels       []string
	annotations  []string
	setFinalizer bool
}

func newAppCreateCommand(s Streams, f *appFlags) *cobra.Command {
	var sf specFlags
	var cf createFlags
	a := &appclient.Create{}
	cmd := &cobra.Command{
		Use:   "create [NAME] (-f FILE | --repo URL ...)",
		Short: "Create an application",
		Long: `Create an Application from flags or from a manifest, like argocd app create.
An app that exists with the same spec, labels, annotations and finalizers is
left unchanged; with a different one the command fails unless --upsert.
Without --project the app joins project "default".`,
		Example: appCreateExample,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			apps, err := cf.apps(s, sf.options(cmd.Flags()), args)
			if err != nil {
				return err
			}
			if a.Client, err = f.client(); err != nil {
				return err
			}
			a.Apps = apps
			results, err := a.Run(cmd.Context())
			for _, r := range results {
				fmt.Fprintf(s.Out, "application '%s' %s\n", r.Name, r.Action)
			}
			return err
		},
	}
	fl := cmd.Flags()
	sf.addTo(fl)
	fl.StringVarP(&cf.file, "file", "f", "", "Application manifest (- for standard input)")
	fl.BoolVar(&a.Upsert, "upsert", false, "replace an existing app whose spec differs")
	fl.StringArrayVarP(&cf.labels, "label", "l", nil, "label KEY=VALUE on the app (repeatable)")
	fl.StringArrayVar(&cf.annotations, "annotations", nil, "annotation KEY=VALUE on the app (repeatable)")
	fl.BoolVar(&cf.setFinalizer, "set-finalizer", false, "add the resources finalizer: deleting the app deletes its objects")
	return cmd
}

// apps builds the apps to create from -f or from the flags.
func (cf *createFlags) apps(s Streams, opts appclient.AppOptions, args []string) ([]*unstructured.Unstructured, error) {
	var apps []*unstructured.Unstructured
	if cf.file != "" {
		if !opts.IsZero() {
			return nil, errors.New("spec flags (--repo, --path, ...) cannot be combined with -f: edit the manifest, or use app set afterwards")
		}
		var err error
		if apps, err = readApps(s, cf.file); err != nil {
			return nil, err
		}
		if len(args) == 1 && (len(apps) != 1 || apps[0].GetName() != args[0]) {
			return nil, fmt.Errorf("NAME %q does not match metadata.name in %s", args[0], cf.file)
		}
	} else {
		if len(args) != 1 {
			return nil, errors.New("give the app's NAME, or -f FILE")
		}
		app := &v1alpha1.Application{}
		app.Name = args[0]
		if err := opts.Apply(&app.Spec); err != nil {
			return nil, err
		}
		u, err := application.ToUnstructured(app)
		if err != nil {
			return nil, err
		}
		apps = append(apps, u)
	}
	return apps, cf.decorate(apps)
}

// decorate adds --label, --annotations and --set-finalizer.
func (cf *createFlags) decorate(apps []*unstructured.Unstructured) error {
	labels, err := keyValues("--label", cf.labels)
	if err != nil {
		return err
	}
	annotations, err := keyValues("--annotations", cf.annotations)
	if err != nil {
		return err
	}
	for _, u := range apps {
		u.SetLabels(merged(u.GetLabels(), labels))
		u.SetAnnotations(merged(u.GetAnnotations(), annotations))
		if cf.setFinalizer && !slices.Contains(u.GetFinalizers(), appclient.ResourcesFinalizer) {
			u.SetFinalizers(append(u.GetFinalizers(), appclient.ResourcesFinalizer))
		}
	}
	return nil
}

// readApps decodes the documents of a YAML or JSON file (- is stdin).
func readApps(s Streams, file string) ([]*unstructured.Unstructured, error) {
	r := s.In
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read applications: %w", err)
		}
		defer fh.Close()
		r = fh
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var apps []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(obj) > 0 {
			apps = append(apps, &unstructured.Unstructured{Object: obj})
		}
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s holds no application", file)
	}
	return apps, nil
}

func keyValues(flag string, items []string) (map[string]string, error) {
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid %s %q: want KEY=VALUE", flag, it)
		}
		out[k] = v
	}
	return out, nil
}

func merged(base, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, extra)
	return out
}

func newAppSetCommand(s Streams, f *appFlags) *cobra.Command {
	var sf specFlags
	cmd := &cobra.Command{
		Use:   "set NAME --FLAG VALUE...",
		Short: "Change an application's spec",
		Long: `Change the spec of an Application with the flags of app create, like argocd
app set. Only the flags given change; the change is a patch that fails on a
concurrent update (and is retried), so nothing else in the app is lost.
--sync-policy none turns automated sync off; --sync-option !OPTION removes an
option.`,
		Example: `  wavecd app set guestbook --revision v1.2.0
  wavecd app set guestbook --sync-policy automated --self-heal
  wavecd app set guestbook --sync-option '!CreateNamespace=true'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, name, err := f.clientFor(args[0])
			if err != nil {
				return err
			}
			app, err := (&appclient.Set{Client: c, Name: name, Options: sf.options(cmd.Flags())}).Run(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "application '%s' updated\n", app.Name)
			return nil
		},
	}
	sf.addTo(cmd.Flags())
	return cmd
}
