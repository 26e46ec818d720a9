package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// Settings ConfigMap and keys wavecd reads, Argo CD's where they exist.
const (
	SettingsConfigMap      = "argocd-cm"
	keyReconcileTimeout    = "timeout.reconciliation"
	keyTrackingMethod      = "application.resourceTrackingMethod"
	keyMirrors             = "wavecd.mirrors"
	keyWaveDelay           = "wavecd.sync.waveDelay"
	keyInstallationID      = "installationID"
	keyStallTimeout        = "wavecd.stall.timeout"
	defaultReconcileTimout = 120 * time.Second
)

// Settings is what the controller reads from argocd-cm.
type Settings struct {
	// Data is the ConfigMap's data, for the health Assessor.
	Data             map[string]string
	ReconcileTimeout time.Duration
	Tracking         kube.TrackingMethod
	InstallationID   string
	Mirrors          source.Mirrors
	// WaveDelay is an extra pause between waves (0: advance on the event;
	// "2s" gives Argo CD's behaviour).
	WaveDelay time.Duration
	// StallTimeout is how long a sync's wave may make no progress before
	// it is examined as a stall (wavecd.stall.timeout; the controller
	// option wins; 2m by default).
	StallTimeout time.Duration
	Assessor     *health.Assessor
	// Kustomize are kustomize.buildOptions and its per-version keys.
	Kustomize render.KustomizeSettings
	// Limits bound what a render reads and produces.
	Limits render.Limits
}

func parseSettings(data map[string]string, opts Options) (*Settings, error) {
	s := &Settings{Data: data, ReconcileTimeout: defaultReconcileTimout, Tracking: kube.TrackingAnnotation, Mirrors: source.Mirrors{},
		Kustomize: render.KustomizeSettingsFrom(data)}
	if v := strings.TrimSpace(data[keyReconcileTimeout]); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm key %s: %w", keyReconcileTimeout, err)
		}
		s.ReconcileTimeout = d
	}
	if v := strings.TrimSpace(data[keyWaveDelay]); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm key %s: %w", keyWaveDelay, err)
		}
		s.WaveDelay = d
	}
	if err := s.parseStallTimeout(data, opts); err != nil {
		return nil, err
	}
	limits, err := render.ParseLimits(data)
	if err != nil {
		return nil, err
	}
	s.Limits = limits
	switch m := strings.TrimSpace(data[keyTrackingMethod]); m {
	case "", "annotation":
	case "label":
		s.Tracking = kube.TrackingLabel
	case "annotation+label":
		s.Tracking = kube.TrackingAnnotationAndLabel
	default:
		return nil, fmt.Errorf("argocd-cm key %s: unknown tracking method %q (annotation, label or annotation+label)", keyTrackingMethod, m)
	}
	s.InstallationID = strings.TrimSpace(data[keyInstallationID])
	if opts.InstallationID != "" {
		s.InstallationID = opts.InstallationID
	}
	if v := data[keyMirrors]; v != "" {
		m, err := source.ParseMirrorsConfig(v)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm key %s: %w", keyMirrors, err)
		}
		s.Mirrors = m
	}
	for url, path := range opts.Mirrors {
		s.Mirrors.Add(url, path)
	}
	assessor, err := health.New(health.Options{Settings: data, ArgoParity: opts.ArgoParity, LibraryDir: opts.HealthLibraryDir})
	if err != nil {
		return nil, fmt.Errorf("health settings in argocd-cm: %w", err)
	}
	s.Assessor = assessor
	return s, nil
}

// parseDuration accepts Go durations and Argo CD's plain seconds.
func parseDuration(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	d, err := time.ParseDuration(v + "s")
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	return d, nil
}
