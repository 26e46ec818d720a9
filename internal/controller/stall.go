package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

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

// renderLocal renders app at the local destination, for the node
// provisioner finder.
func (r *Reconciler) renderLocal(ctx context.Context, app *v1alpha1.Application) ([]*unstructured.Unstructured, error) {
	s, err := r.settings.get(ctx, r.client, r.opts)
	if err != nil {
		return nil, err
	}
	res, err := r.comparer.Render(ctx, r.targets.Local(), app, &s.Settings, compare.RenderOptions{})
	if err != nil {
		return nil, err
	}
	return res.Objects, nil
}
