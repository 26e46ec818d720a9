package compare

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/render"
)

// SettingsConfigMap is Argo CD's settings ConfigMap, in the namespace of
// the Applications.
const SettingsConfigMap = "argocd-cm"

// argocd-cm keys a comparison reads; render and health read their own.
const (
	keyTrackingMethod = "application.resourceTrackingMethod"
	keyInstallationID = "installationID"
	keyMirrors        = "wavecd.mirrors"

	keyImpersonationEnabled  = "application.sync.impersonation.enabled"
	keyImpersonationEnforced = "application.sync.impersonation.enforced"
)

// Settings are what a comparison reads from argocd-cm: how objects are
// tracked, how health is assessed, how Kustomize builds and how much a
// render may read.
type Settings struct {
	// Namespace is the control namespace these settings were read from.
	Namespace      string
	Tracking       kube.TrackingMethod
	InstallationID string
	Assessor       *health.Assessor
	// Kustomize are kustomize.buildOptions and its per-version keys.
	Kustomize render.KustomizeSettings
	// Limits bound what a render reads and produces.
	Limits render.Limits
	// ArgoParity diffs as Argo CD does where wavecd differs: a child
	// Application's deletion-hook finalizers count as drift.
	ArgoParity bool
	// Impersonation is argocd-cm's sync impersonation.
	Impersonation Impersonation
}

// Impersonation says whether syncs write as the service account their
// project's destinationServiceAccounts give (application.sync.impersonation.enabled)
// and whether a sync with none fails (application.sync.impersonation.enforced,
// default true) or writes with the controller's own rights.
type Impersonation struct {
	Enabled, Enforced bool
}

// SettingsOptions are the controller's options that change Settings.
type SettingsOptions struct {
	// ArgoParity turns off what wavecd adds to health: child Application
	// health and the generic condition check.
	ArgoParity bool
	// HealthLibraryDir is a directory of Lua health checks in Argo CD's
	// layout.
	HealthLibraryDir string
	// InstallationID overrides argocd-cm's installationID.
	InstallationID string
	// Namespace is the control namespace argocd-cm is in (default argocd):
	// the one whose apps' instance names are their names.
	Namespace string
}

// ParseSettings reads the keys of argocd-cm's data a comparison needs.
// Errors name the key.
func ParseSettings(data map[string]string, opts SettingsOptions) (Settings, error) {
	s := Settings{Namespace: cmp.Or(opts.Namespace, "argocd"), Tracking: kube.TrackingAnnotation, Kustomize: render.KustomizeSettingsFrom(data)}
	s.Impersonation = Impersonation{
		Enabled:  data[keyImpersonationEnabled] == "true",
		Enforced: data[keyImpersonationEnforced] != "false",
	}
	limits, err := render.ParseLimits(data)
	if err != nil {
		return Settings{}, err
	}
	s.Limits = limits
	switch m := strings.TrimSpace(data[keyTrackingMethod]); m {
	case "", "annotation":
	case "label":
		s.Tracking = kube.TrackingLabel
	case "annotation+label":
		s.Tracking = kube.TrackingAnnotationAndLabel
	default:
		return Settings{}, fmt.Errorf("argocd-cm key %s: unknown tracking method %q (annotation, label or annotation+label)", keyTrackingMethod, m)
	}
	s.InstallationID = strings.TrimSpace(data[keyInstallationID])
	if opts.InstallationID != "" {
		s.InstallationID = opts.InstallationID
	}
	assessor, err := health.New(health.Options{Settings: data, ArgoParity: opts.ArgoParity, LibraryDir: opts.HealthLibraryDir})
	if err != nil {
		return Settings{}, fmt.Errorf("health settings in argocd-cm: %w", err)
	}
	s.Assessor = assessor
	s.ArgoParity = opts.ArgoParity
	return s, nil
}

// ReadSettings reads argocd-cm of namespace (an absent one is empty) and
// parses it.
func ReadSettings(ctx context.Context, reader client.Reader, namespace string, opts SettingsOptions) (Settings, error) {
	data, err := readSettingsData(ctx, reader, namespace)
	if err != nil {
		return Settings{}, err
	}
	opts.Namespace = namespace
	return ParseSettings(data, opts)
}

func readSettingsData(ctx context.Context, reader client.Reader, namespace string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: SettingsConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", SettingsConfigMap, err)
	}
	return cm.Data, nil
}

// TrackingOf is how the objects of app are tracked: by its instance
// name (application.Namespaces.InstanceName).
func (s *Settings) TrackingOf(app *v1alpha1.Application) kube.Tracking {
	return kube.Tracking{Method: s.Tracking, AppName: s.Namespaces().InstanceName(app.Namespace, app.Name), InstallationID: s.InstallationID}
}

// Namespaces is where the installation's Applications live, as far as
// names go: its control namespace, which holds argocd-cm.
func (s *Settings) Namespaces() application.Namespaces {
	return application.Namespaces{Control: s.Namespace}
}
