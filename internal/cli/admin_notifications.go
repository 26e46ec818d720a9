package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/notify"
)

func newAdminNotificationsCommand(s Streams) *cobra.Command {
	a := &notificationsAction{out: s.Out, errOut: s.Err}
	cmd := &cobra.Command{
		Use:   "notifications",
		Short: "Try notification templates and triggers against live apps",
		Long: `Read argocd-notifications-cm and argocd-notifications-secret (from the
cluster, or from files with --config-map and --secret) and try a template or
a trigger against an Application, as "argocd admin notifications" does.
Nothing is sent: the commands print.`,
	}
	a.flags.addTo(cmd.PersistentFlags(), "namespace of the Applications and the notification settings")
	cmd.PersistentFlags().StringVar(&a.configMap, "config-map", "", "read "+notify.ConfigMapName+" from this YAML file instead of the cluster")
	cmd.PersistentFlags().StringVar(&a.secret, "secret", "", "read "+notify.SecretName+" from this YAML file instead of the cluster (:empty for none)")
	template := &cobra.Command{Use: "template", Short: "Notification templates"}
	template.AddCommand(a.templateGetCommand(), a.templateNotifyCommand())
	trigger := &cobra.Command{Use: "trigger", Short: "Notification triggers"}
	trigger.AddCommand(a.triggerGetCommand(), a.triggerRunCommand())
	cmd.AddCommand(template, trigger)
	return cmd
}

// notificationsAction holds what the notifications commands share.
type notificationsAction struct {
	out, errOut io.Writer
	flags       namespaceFlags
	configMap   string
	secret      string
	output      string
	recipients  []string

	kube client.Client
}

func (a *notificationsAction) templateNotifyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify NAME APP",
		Short: "Render a template for an app and print the notification",
		Long: `Render template NAME for APP (an Application's name, or a YAML file holding
one) and print the notification as YAML, for each --recipient: the
template sees .serviceType and .recipient as the service would. Nothing
is sent.`,
		Example: `  wavecd admin notifications template notify app-sync-succeeded guestbook
  wavecd admin notifications template notify app-deployed guestbook --recipient slack:deployments
  wavecd admin notifications template notify app-stalled ./app.yaml --config-map notifications-cm.yaml --secret :empty`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return a.notify(cmd.Context(), args[0], args[1]) },
	}
	cmd.Flags().StringArrayVar(&a.recipients, "recipient", []string{"console:stdout"}, "SERVICE:RECIPIENT the notification is rendered for (repeatable)")
	return cmd
}

func (a *notificationsAction) triggerRunCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME APP",
		Short: "Evaluate a trigger against an app and print each condition's result",
		Long: `Evaluate trigger NAME against APP (an Application's name, or a YAML file
holding one) and print, for each condition, whether it holds. Nothing is
sent and no state is changed.`,
		Example: `  wavecd admin notifications trigger run on-sync-status-unknown guestbook
  wavecd admin notifications trigger run on-stalled ./app.yaml --config-map notifications-cm.yaml --secret :empty`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return a.run(cmd.Context(), args[0], args[1]) },
	}
}

func (a *notificationsAction) templateGetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List the templates, or print one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.get(cmd.Context(), args, func(cfg *notify.Config) []string { return cfg.TemplateNames() },
				func(cfg *notify.Config, name string) (string, any) {
					t := cfg.Templates[name]
					return preview(t.Notification), t.Notification
				}, "PREVIEW")
		},
	}
	cmd.Flags().StringVarP(&a.output, "output", "o", "wide", "output format: wide, name, yaml or json")
	return cmd
}

func (a *notificationsAction) triggerGetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List the triggers, or print one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.get(cmd.Context(), args, func(cfg *notify.Config) []string { return cfg.TriggerNames() },
				func(cfg *notify.Config, name string) (string, any) {
					t := cfg.Triggers[name]
					var rows []string
					for _, c := range t.Conditions {
						rows = append(rows, strings.Join(c.Send, ", ")+"\t"+c.When)
					}
					return strings.Join(rows, "\n\t"), t.Conditions
				}, "TEMPLATE\tCONDITION")
		},
	}
	cmd.Flags().StringVarP(&a.output, "output", "o", "wide", "output format: wide, name, yaml or json")
	return cmd
}

// get lists names (with a row each) or prints the items structured.
func (a *notificationsAction) get(ctx context.Context, args []string, names func(*notify.Config) []string,
	item func(*notify.Config, string) (string, any), header string) error {
	if err := validateOutput(a.output, "wide", "name", "yaml", "json"); err != nil {
		return err
	}
	cfg, err := a.config(ctx)
	if err != nil {
		return err
	}
	list := names(cfg)
	if len(args) == 1 {
		if !slices.Contains(list, args[0]) {
			return fmt.Errorf("%q is not defined in %s (defined: %s)", args[0], notify.ConfigMapName, strings.Join(list, ", "))
		}
		list = args
	}
	switch a.output {
	case "name":
		for _, n := range list {
			fmt.Fprintln(a.out, n)
		}
		return nil
	case "yaml", "json":
		items := map[string]any{}
		for _, n := range list {
			_, items[n] = item(cfg, n)
		}
		return printStructured(a.out, a.output, items)
	}
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\t"+header)
	for _, n := range list {
		row, _ := item(cfg, n)
		fmt.Fprintf(w, "%s\t%s\n", n, row)
	}
	return w.Flush()
}

// preview is the first line of a template's message, or of its YAML.
func preview(n notify.Notification) string {
	s := n.Message
	if s == "" {
		b, _ := yaml.Marshal(n)
		s = string(b)
	}
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// notify renders a template for each recipient and prints it.
func (a *notificationsAction) notify(ctx context.Context, name, appRef string) error {
	cfg, err := a.config(ctx)
	if err != nil {
		return err
	}
	if _, ok := cfg.Templates[name]; !ok {
		return fmt.Errorf("template %q is not defined in %s (defined: %s)", name, notify.ConfigMapName, strings.Join(cfg.TemplateNames(), ", "))
	}
	app, env, err := a.app(ctx, appRef)
	if err != nil {
		return err
	}
	for i, r := range a.recipients {
		service, recipient, _ := strings.Cut(r, ":")
		n, err := cfg.Render(app, env, notify.Pending{Templates: []string{name}, Dest: notify.Destination{Service: service, Recipient: recipient}})
		if err != nil {
			return err
		}
		if len(a.recipients) > 1 {
			if i > 0 {
				fmt.Fprintln(a.out, "---")
			}
			fmt.Fprintf(a.out, "# %s\n", r)
		}
		if err := printStructured(a.out, "yaml", n); err != nil {
			return err
		}
	}
	return nil
}

// run evaluates a trigger and prints each condition's result.
func (a *notificationsAction) run(ctx context.Context, name, appRef string) error {
	cfg, err := a.config(ctx)
	if err != nil {
		return err
	}
	t, ok := cfg.Triggers[name]
	if !ok {
		return fmt.Errorf("trigger %q is not defined in %s (defined: %s)", name, notify.ConfigMapName, strings.Join(cfg.TriggerNames(), ", "))
	}
	app, env, err := a.app(ctx, appRef)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CONDITION\tRESULT\tONCE PER")
	for _, r := range t.Run(cfg.Vars(app, env, notify.Destination{})) {
		result := fmt.Sprint(r.Triggered)
		if r.Err != nil {
			result = "false (" + r.Err.Error() + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(r.Condition.When), result, r.OncePer)
	}
	return w.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cluster connects once, for what the files do not give.
func (a *notificationsAction) cluster() (client.Client, error) {
	if a.kube != nil {
		return a.kube, nil
	}
	_, c, err := a.flags.connect()
	if err != nil {
		return nil, err
	}
	a.kube = c
	return c, nil
}

// config reads the settings from the files or the cluster; keys that
// cannot be read are reported on stderr and left out.
func (a *notificationsAction) config(ctx context.Context) (*notify.Config, error) {
	cm := &corev1.ConfigMap{}
	if err := a.read(ctx, a.configMap, notify.ConfigMapName, cm); err != nil {
		return nil, err
	}
	secret := &corev1.Secret{}
	if a.secret != ":empty" {
		if err := a.read(ctx, a.secret, notify.SecretName, secret); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	cfg := notify.ParseConfig(cm.Data, kube.SecretData(secret))
	for _, e := range cfg.Errors {
		fmt.Fprintf(a.errOut, "warning: %v\n", e)
	}
	return cfg, nil
}

// read reads the named object from file, or from the cluster when file
// is empty.
func (a *notificationsAction) read(ctx context.Context, file, name string, into client.Object) error {
	if file == "" {
		c, err := a.cluster()
		if err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: a.flags.namespace, Name: name}, into); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		return nil
	}
	objs, err := readApps(Streams{}, file)
	if err != nil {
		return err
	}
	kind := "ConfigMap"
	if _, ok := into.(*corev1.Secret); ok {
		kind = "Secret"
	}
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			b, _ := o.MarshalJSON()
			return yaml.Unmarshal(b, into)
		}
	}
	return fmt.Errorf("%s holds no %s %s", file, kind, name)
}

// app reads an Application from a file, or from the cluster by name,
// with what its triggers see besides it: the other Applications and the
// AppProject of the same file, or of the cluster.
func (a *notificationsAction) app(ctx context.Context, ref string) (map[string]any, notify.Env, error) {
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		return appFromFile(ref)
	}
	c, err := a.cluster()
	if err != nil {
		return nil, notify.Env{}, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
	if err := c.Get(ctx, client.ObjectKey{Namespace: a.flags.namespace, Name: ref}, u); err != nil {
		return nil, notify.Env{}, fmt.Errorf("read application %s: %w", ref, err)
	}
	return u.Object, clusterEnv(ctx, c, u), nil
}

// appFromFile returns the file's first Application, with the file's
// Applications and AppProject as its surroundings.
func appFromFile(path string) (map[string]any, notify.Env, error) {
	objs, err := readApps(Streams{}, path)
	if err != nil {
		return nil, notify.Env{}, err
	}
	var app map[string]any
	var apps []*v1alpha1.Application
	var env notify.Env
	for _, o := range objs {
		switch o.GetKind() {
		case v1alpha1.ApplicationKind:
			if app == nil {
				app = o.Object
			}
			typed := &v1alpha1.Application{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, typed); err != nil {
				return nil, env, fmt.Errorf("%s: application %s: %w", path, o.GetName(), err)
			}
			apps = append(apps, typed)
		case "AppProject":
			env.Project = o.Object
		}
	}
	if app == nil {
		return nil, env, fmt.Errorf("%s holds no Application", path)
	}
	env.Apps = func() []*v1alpha1.Application { return apps }
	return app, env, nil
}

// clusterEnv gives an app of the cluster its project and the other apps
// of its namespace.
func clusterEnv(ctx context.Context, c client.Client, app *unstructured.Unstructured) notify.Env {
	var env notify.Env
	project, _, _ := unstructured.NestedString(app.Object, "spec", "project")
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("AppProject"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: app.GetNamespace(), Name: cmp.Or(project, "default")}, p); err == nil {
		env.Project = p.Object
	}
	env.Apps = func() []*v1alpha1.Application {
		list := &v1alpha1.ApplicationList{}
		if err := c.List(ctx, list, client.InNamespace(app.GetNamespace())); err != nil {
			return nil
		}
		out := make([]*v1alpha1.Application, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out
	}
	return env
}
