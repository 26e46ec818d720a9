package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/source"
)

// SettingsConfigMap is Argo CD's settings ConfigMap, in the controller's
// namespace.
const SettingsConfigMap = compare.SettingsConfigMap

// argocd-cm keys the controller reads, Argo CD's where they exist; those
// of a comparison are compare's.
const (
	keyReconcileTimeout    = "timeout.reconciliation"
	keyMirrors             = "wavecd.mirrors"
	keyWaveDelay           = "wavecd.sync.waveDelay"
	keyStallTimeout        = "wavecd.stall.timeout"
	defaultReconcileTimout = 120 * time.Second
)

// Settings is what the controller reads from argocd-cm.
type Settings struct {
	// Settings are those of a comparison: tracking, health, Kustomize and
	// render limits.
	compare.Settings
	// Data is the ConfigMap's data.
	Data             map[string]string
	ReconcileTimeout time.Duration
	Mirrors          source.Mirrors
	// WaveDelay is an extra pause between waves (0: advance on the event;
	// "2s" gives Argo CD's behaviour).
	WaveDelay time.Duration
	// StallTimeout is how long a sync's wave may make no progress before
	// it is examined as a stall (wavecd.stall.timeout; the controller
	// option wins; 2m by default).
	StallTimeout time.Duration
}

func parseSettings(data map[string]string, opts Options) (*Settings, error) {
	s := &Settings{Data: data, ReconcileTimeout: defaultReconcileTimout, Mirrors: source.Mirrors{}}
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
	cs, err := compare.ParseSettings(data, compare.SettingsOptions{
		ArgoParity: opts.ArgoParity, HealthLibraryDir: opts.HealthLibraryDir, InstallationID: opts.InstallationID,
	})
	if err != nil {
		return nil, err
	}
	s.Settings = cs
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
