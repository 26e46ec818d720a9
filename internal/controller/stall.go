package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/compare"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// parseStallTimeout reads wavecd.stall.timeout; the controller option wins.
func (s *Settings) parseStallTimeout(data map[string]string, opts Options) error {
	s.StallTimeout = wsync.DefaultStallTimeout
	if v := strings.TrimSpace(data[keyStallTimeout]); v != "" {
		d, err := parseDuration(v)
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

// markStalled sets the SyncStalled condition while the running sync's step
// is stalled, with the operation's message, and clears it otherwise.
func markStalled(status *v1alpha1.ApplicationStatus, st *wsync.State, now time.Time) {
	if st.Stalled == "" || st.Phase.Completed() {
		application.ClearCondition(status, v1alpha1.ApplicationConditionSyncStalled)
		return
	}
	application.SetCondition(status, v1alpha1.ApplicationConditionSyncStalled, "stalled: "+st.Stalled, now)
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
