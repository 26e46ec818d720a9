package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/source"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// SettingsConfigMap is Argo CD's settings ConfigMap, in the controller's
// namespace.
const SettingsConfigMap = compare.SettingsConfigMap

// argocd-cm keys the controller reads, Argo CD's where they exist; those
// of a comparison are compare's.
const (
	keyReconcileTimeout    = "timeout.reconciliation"
	keyReconcileJitter     = "timeout.reconciliation.jitter"
	keyMirrors             = "wavecd.mirrors"
	keyWaveDelay           = "wavecd.sync.waveDelay"
	keyStallTimeout        = "wavecd.stall.timeout"
	defaultReconcileTimout = 120 * time.Second
	defaultReconcileJitter = time.Minute
)

// Settings is what the controller reads from argocd-cm.
type Settings struct {
	// Settings are those of a comparison: tracking, health, Kustomize and
	// render limits.
	compare.Settings
	// Data is the ConfigMap's data.
	Data             map[string]string
	ReconcileTimeout time.Duration
	// ReconcileJitter is the most a periodic refresh is put off at random,
	// so apps do not refresh in lockstep (timeout.reconciliation.jitter,
	// 1m by default as in Argo CD; 0: none).
	ReconcileJitter time.Duration
	Mirrors         source.Mirrors
	// WaveDelay is an extra pause between waves (0: advance on the event;
	// "2s" gives Argo CD's behaviour).
	WaveDelay time.Duration
	// StallTimeout is how long a sync's wave may make no progress before
	// it is examined as a stall (wavecd.stall.timeout; the controller
	// option wins; 2m by default).
	StallTimeout time.Duration
}

func parseSettings(data map[string]string, opts Options) (*Settings, error) {
	s := &Settings{Data: data, ReconcileTimeout: defaultReconcileTimout, ReconcileJitter: defaultReconcileJitter, Mirrors: source.Mirrors{}}
	// In a fixed order, so that of several bad keys the same one is named.
	durations := []struct {
		key string
		dst *time.Duration
	}{
		{keyReconcileTimeout, &s.ReconcileTimeout}, {keyReconcileJitter, &s.ReconcileJitter}, {keyWaveDelay, &s.WaveDelay},
	}
	for _, d := range durations {
		v := strings.TrimSpace(data[d.key])
		if v == "" {
			continue
		}
		parsed, err := v1alpha1.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm key %s: %w", d.key, err)
		}
		*d.dst = parsed
	}
	if err := s.parseStallTimeout(data, opts); err != nil {
		return nil, err
	}
	cs, err := compare.ParseSettings(data, compare.SettingsOptions{
		ArgoParity: opts.ArgoParity, HealthLibraryDir: opts.HealthLibraryDir, InstallationID: opts.InstallationID, Namespace: opts.Namespace,
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

// parseStallTimeout reads wavecd.stall.timeout; the controller option wins.
func (s *Settings) parseStallTimeout(data map[string]string, opts Options) error {
	s.StallTimeout = wsync.DefaultStallTimeout
	if v := strings.TrimSpace(data[keyStallTimeout]); v != "" {
		d, err := v1alpha1.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("argocd-cm key %s: %w", keyStallTimeout, err)
		}
		s.StallTimeout = d
	}
	if opts.StallTimeout != 0 {
		s.StallTimeout = opts.StallTimeout
	}
	return nil
}
