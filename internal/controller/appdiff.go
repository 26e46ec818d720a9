package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/server"
	"github.com/wavecd/wavecd/internal/source"
)

// DiffOptions configure Diff.
type DiffOptions struct {
	// Local renders this folder (the source's path on disk) instead of
	// the app's source in Git; single-source apps only.
	Local string
	// CacheDir holds Git clones (default: a folder in the user cache dir).
	CacheDir string
	// Mirrors map repository URLs to local paths.
	Mirrors source.Mirrors
}

// ObjectDiff is one object whose live state differs from the desired one.
type ObjectDiff struct {
	Group, Kind, Namespace, Name string
	// Missing: desired but not live. Extra: live but no longer desired.
	Missing, Extra bool
	// Text is a unified diff from the live object to the one an apply
	// would store (or the reason the dry run failed). Secret values are
	// masked.
	Text string
	// Live and Predicted are the normalized objects compared (nil when
	// absent), with Secret values masked as in Text.
	Live, Predicted *unstructured.Unstructured
}

// Diff compares app with the cluster as a refresh does (render, dry-run
// apply, normalize, ignoreDifferences), using argocd-cm of the app's
// namespace (its wavecd.mirrors too, as a controller does), and returns the objects that differ, sorted by group, kind,
// namespace and name. It writes nothing: the server-side diff dry-runs.
func Diff(ctx context.Context, cfg *rest.Config, app *v1alpha1.Application, opts DiffOptions) ([]ObjectDiff, error) {
	copts := Options{Namespace: app.Namespace, CacheDir: opts.CacheDir, Mirrors: opts.Mirrors}
	if err := copts.defaults(); err != nil {
		return nil, err
	}
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to the Kubernetes API: %w", err)
	}
	r, err := buildReconciler(cfg, c, c, copts)
	if err != nil {
		return nil, err
	}
	if err := r.loadMirrors(ctx); err != nil {
		return nil, err
	}
	s, err := r.settings.get(ctx, r.client, r.opts)
	if err != nil {
		return nil, err
	}
	_, tgt, err := r.targets.resolve(ctx, app)
	if err != nil {
		return nil, err
	}
	var res *rendered
	if opts.Local != "" {
		res, err = r.renderLocal(ctx, tgt, app, opts.Local)
	} else {
		res, err = r.renderApp(ctx, tgt, app, renderOptions{})
	}
	if err != nil {
		return nil, err
	}
	cmp, err := r.diffRendered(ctx, tgt, app, res, s)
	if err != nil {
		return nil, err
	}
	return objectDiffs(cmp.diffs), nil
}

func objectDiffs(results []diff.Result) []ObjectDiff {
	var out []ObjectDiff
	for _, d := range results {
		if d.Status != diff.OutOfSync {
			continue
		}
		if diff.IsSecret(d.GVK.GroupKind()) {
			masks := map[string]string{} // Text is masked already, with masks of its own
			d.Live, d.Predicted = diff.MaskSecretValues(d.Live, masks), diff.MaskSecretValues(d.Predicted, masks)
		}
		out = append(out, ObjectDiff{
			Group: d.GVK.Group, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name,
			Missing: d.Missing, Extra: d.Extra, Text: d.Text, Live: d.Live, Predicted: d.Predicted,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Join([]string{a.Group, a.Kind, a.Namespace, a.Name}, "/") < strings.Join([]string{b.Group, b.Kind, b.Namespace, b.Name}, "/")
	})
	return out
}

// Differ adapts Diff to internal/server's Differ, for the API server's
// managed-resources endpoint and the UI's diff view.
func Differ(cfg *rest.Config, opts DiffOptions) server.Differ {
	return server.DifferFunc(func(ctx context.Context, app *v1alpha1.Application) ([]server.ResourceDiff, error) {
		diffs, err := Diff(ctx, cfg, app, opts)
		if err != nil {
			return nil, err
		}
		out := make([]server.ResourceDiff, len(diffs))
		for i, d := range diffs {
			out[i] = server.ResourceDiff{
				Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name,
				Missing: d.Missing, Extra: d.Extra, Text: d.Text, Live: d.Live, Predicted: d.Predicted,
			}
		}
		return out, nil
	})
}
