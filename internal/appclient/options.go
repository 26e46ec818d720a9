package appclient

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// AppOptions are the spec fields `app create` and `app set` take from
// flags. A nil field is left alone, so the same options patch an existing
// app or fill a new one.
type AppOptions struct {
	Repo          *string
	Path          *string
	Revision      *string
	Chart         *string
	DestServer    *string
	DestName      *string
	DestNamespace *string
	Project       *string
	// SyncPolicy is "automated" (or "auto", "automatic") or "none" (or
	// "manual").
	SyncPolicy *string
	AutoPrune  *bool
	SelfHeal   *bool
	AllowEmpty *bool
	// SyncOptions are added; one starting with "!" is removed instead.
	SyncOptions []string
}

// IsZero reports whether no option is set.
func (o AppOptions) IsZero() bool {
	return o.Repo == nil && o.Path == nil && o.Revision == nil && o.Chart == nil &&
		o.DestServer == nil && o.DestName == nil && o.DestNamespace == nil && o.Project == nil &&
		o.SyncPolicy == nil && o.AutoPrune == nil && o.SelfHeal == nil && o.AllowEmpty == nil &&
		len(o.SyncOptions) == 0
}

// Apply sets the options on spec, with Argo CD's rules: --auto-prune,
// --self-heal and --allow-empty need automated sync.
func (o AppOptions) Apply(spec *v1alpha1.ApplicationSpec) error {
	if err := o.applySource(spec); err != nil {
		return err
	}
	setString(&spec.Destination.Server, o.DestServer)
	setString(&spec.Destination.Name, o.DestName)
	setString(&spec.Destination.Namespace, o.DestNamespace)
	setString(&spec.Project, o.Project)
	if err := o.applySyncPolicy(spec); err != nil {
		return err
	}
	o.applySyncOptions(spec)
	if p := spec.SyncPolicy; p != nil && p.Automated == nil && len(p.SyncOptions) == 0 && p.Retry == nil && p.ManagedNamespaceMetadata == nil {
		spec.SyncPolicy = nil
	}
	return nil
}

func (o AppOptions) applySource(spec *v1alpha1.ApplicationSpec) error {
	if o.Repo == nil && o.Path == nil && o.Revision == nil && o.Chart == nil {
		return nil
	}
	if spec.HasMultipleSources() {
		return fmt.Errorf("the application has several sources (spec.sources): --repo, --path, --revision and --helm-chart only edit spec.source")
	}
	if spec.Source == nil {
		spec.Source = &v1alpha1.ApplicationSource{}
	}
	setString(&spec.Source.RepoURL, o.Repo)
	setString(&spec.Source.Path, o.Path)
	setString(&spec.Source.TargetRevision, o.Revision)
	setString(&spec.Source.Chart, o.Chart)
	return nil
}

func (o AppOptions) applySyncPolicy(spec *v1alpha1.ApplicationSpec) error {
	if o.SyncPolicy != nil {
		switch strings.ToLower(*o.SyncPolicy) {
		case "automated", "auto", "automatic":
			if spec.SyncPolicy == nil {
				spec.SyncPolicy = &v1alpha1.SyncPolicy{}
			}
			if !spec.SyncPolicy.IsAutomated() {
				spec.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{}
			}
		case "none", "manual":
			if spec.SyncPolicy != nil {
				spec.SyncPolicy.Automated = nil
			}
		default:
			return fmt.Errorf("invalid --sync-policy %q: use automated or none", *o.SyncPolicy)
		}
	}
	for _, f := range []struct {
		flag  string
		value *bool
		field func(*v1alpha1.SyncPolicyAutomated) *bool
	}{
		{"--auto-prune", o.AutoPrune, func(a *v1alpha1.SyncPolicyAutomated) *bool { return &a.Prune }},
		{"--self-heal", o.SelfHeal, func(a *v1alpha1.SyncPolicyAutomated) *bool { return &a.SelfHeal }},
		{"--allow-empty", o.AllowEmpty, func(a *v1alpha1.SyncPolicyAutomated) *bool { return &a.AllowEmpty }},
	} {
		if f.value == nil {
			continue
		}
		if !spec.SyncPolicy.IsAutomated() {
			return fmt.Errorf("cannot set %s: application not configured with automatic sync (add --sync-policy automated)", f.flag)
		}
		*f.field(spec.SyncPolicy.Automated) = *f.value
	}
	return nil
}

func (o AppOptions) applySyncOptions(spec *v1alpha1.ApplicationSpec) {
	if len(o.SyncOptions) == 0 {
		return
	}
	if spec.SyncPolicy == nil {
		spec.SyncPolicy = &v1alpha1.SyncPolicy{}
	}
	for _, opt := range o.SyncOptions {
		if remove, ok := strings.CutPrefix(opt, "!"); ok {
			spec.SyncPolicy.SyncOptions = slices.DeleteFunc(spec.SyncPolicy.SyncOptions, func(s string) bool {
				return strings.TrimSpace(s) == remove
			})
			continue
		}
		if !spec.SyncPolicy.SyncOptions.HasOption(opt) {
			spec.SyncPolicy.SyncOptions = append(spec.SyncPolicy.SyncOptions, opt)
		}
	}
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}
