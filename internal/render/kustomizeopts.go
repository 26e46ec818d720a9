package render

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// KustomizeSettings are argocd-cm's kustomize keys: kustomize.buildOptions
// and kustomize.buildOptions.<version> (used by apps whose
// kustomize.version names that version).
type KustomizeSettings struct {
	BuildOptions string            `json:"buildOptions,omitempty"`
	Versions     map[string]string `json:"versions,omitempty"`
}

// KustomizeSettingsFrom reads the kustomize keys of argocd-cm's data.
func KustomizeSettingsFrom(data map[string]string) KustomizeSettings {
	const key = "kustomize.buildOptions"
	s := KustomizeSettings{BuildOptions: data[key]}
	for k, v := range data {
		if version, ok := strings.CutPrefix(k, key+"."); ok {
			if s.Versions == nil {
				s.Versions = map[string]string{}
			}
			s.Versions[version] = v
		}
	}
	return s
}

// buildOptions are the `kustomize build` flags wavecd honours.
type buildOptions struct {
	// key names the argocd-cm key the flags came from, for messages.
	key         string
	enableHelm  bool
	reorder     krusty.ReorderOption
	loadNone    bool
	managedBy   bool
	kubeVersion string
	apiVersions []string
	debug       bool
	warnings    []string
}

// parseBuildOptions reads the build options that apply to an app
// (per-version ones when its kustomize.version has some). Flags that run
// programs (--enable-alpha-plugins, --enable-exec, --helm-command) are
// ignored with a warning: kustomize plugins never run and charts are
// inflated with the Helm SDK. An unknown flag is an error naming the key.
func parseBuildOptions(s KustomizeSettings, version string) (*buildOptions, error) {
	o := &buildOptions{key: "kustomize.buildOptions", reorder: krusty.ReorderOptionLegacy}
	flags := s.BuildOptions
	if v, ok := s.Versions[version]; ok && version != "" {
		o.key, flags = "kustomize.buildOptions."+version, v
	}
	args := strings.Fields(flags)
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("argocd-cm key %s: flag %s needs a value", o.key, name)
			}
			i++
			return args[i], nil
		}
		if err := o.apply(name, next); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *buildOptions) apply(name string, next func() (string, error)) error {
	var err error
	var v string
	switch name {
	case "--enable-helm":
		o.enableHelm = true
	case "--helm-debug":
		o.debug = true
	case "--enable-managedby-label":
		o.managedBy = true
	case "--load-restrictor", "--load_restrictor":
		if v, err = next(); err == nil {
			err = o.setLoadRestrictor(v)
		}
	case "--reorder":
		if v, err = next(); err == nil {
			err = o.setReorder(v)
		}
	case "--helm-kube-version":
		o.kubeVersion, err = next()
	case "--helm-api-versions":
		if v, err = next(); err == nil {
			o.apiVersions = append(o.apiVersions, strings.Split(v, ",")...)
		}
	case "--helm-command":
		if v, err = next(); err == nil {
			o.warnings = append(o.warnings, fmt.Sprintf("argocd-cm key %s: --helm-command %s ignored: charts are inflated with the Helm SDK, never a helm binary", o.key, v))
		}
	case "--enable-alpha-plugins", "--enable-exec", "--enable-star", "--network":
		o.warnings = append(o.warnings, fmt.Sprintf("argocd-cm key %s: %s ignored: wavecd runs no kustomize plugins or functions", o.key, name))
	case "--mount", "--env", "-e", "--network-name", "--output", "-o":
		_, err = next()
		o.warnings = append(o.warnings, fmt.Sprintf("argocd-cm key %s: %s ignored", o.key, name))
	default:
		return fmt.Errorf("argocd-cm key %s: unknown kustomize build flag %q", o.key, name)
	}
	return err
}

func (o *buildOptions) setLoadRestrictor(v string) error {
	switch v {
	case "LoadRestrictionsNone", "none":
		o.loadNone = true
	case "LoadRestrictionsRootOnly", "rootOnly":
		o.loadNone = false
	default:
		return fmt.Errorf("argocd-cm key %s: --load-restrictor %q: want LoadRestrictionsRootOnly or LoadRestrictionsNone", o.key, v)
	}
	return nil
}

func (o *buildOptions) setReorder(v string) error {
	switch v {
	case "legacy":
		o.reorder = krusty.ReorderOptionLegacy
	case "none":
		o.reorder = krusty.ReorderOptionNone
	default:
		return fmt.Errorf("argocd-cm key %s: --reorder %q: want legacy or none", o.key, v)
	}
	return nil
}

// krusty returns kustomize's options for o. Helm stays disabled in
// kustomize itself: enabled charts are inflated before the build, so a
// helmCharts entry left in a kustomization fails with kustomize's own
// "must specify --enable-helm", as in Argo CD.
func (o *buildOptions) krusty() *krusty.Options {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = o.reorder
	opts.AddManagedbyLabel = o.managedBy
	if o.loadNone {
		opts.LoadRestrictions = types.LoadRestrictionsNone
	}
	return opts
}
