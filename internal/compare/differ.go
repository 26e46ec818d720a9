package compare

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/source"
)

// DifferOptions configure a Differ.
type DifferOptions struct {
	// CacheDir holds Git clones (default: a folder in the user cache dir).
	CacheDir string
	// Mirrors map repository URLs to local paths (argocd-cm's
	// wavecd.mirrors are added, as a controller adds them).
	Mirrors source.Mirrors
	// Namespace is the control namespace: argocd-cm, the cluster and
	// repository Secrets (default: the app's namespace, for an
	// installation without apps in other namespaces).
	Namespace string
}

// Differ compares apps with the cluster outside any controller, for
// `wavecd app diff` and the API server's diffs.
type Differ struct {
	cfg  *rest.Config
	opts DifferOptions
}

// NewDiffer returns a Differ for the cluster cfg points at.
func NewDiffer(cfg *rest.Config, opts DifferOptions) *Differ {
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	return &Differ{cfg: cfg, opts: opts}
}

// Diff compares app with the cluster as a refresh does (render, dry-run
// apply, normalize, ignoreDifferences), using argocd-cm of the control
// namespace, and returns the objects that differ, sorted by group, kind,
// namespace and name, with Secret values masked in Text, Live and
// Predicted. It writes nothing: the server-side diff dry-runs.
func (d *Differ) Diff(ctx context.Context, app *v1alpha1.Application) ([]diff.Result, error) {
	return d.diff(ctx, app, "")
}

// DiffLocal is Diff with the folder dir (the source's path on disk)
// rendered in place of the app's source in Git, as `argocd app diff
// --local` does; single-source apps only.
func (d *Differ) DiffLocal(ctx context.Context, app *v1alpha1.Application, dir string) ([]diff.Result, error) {
	return d.diff(ctx, app, dir)
}

func (d *Differ) diff(ctx context.Context, app *v1alpha1.Application, local string) ([]diff.Result, error) {
	cmp, tgt, s, err := d.open(ctx, app)
	if err != nil {
		return nil, err
	}
	var res *Rendered
	if local != "" {
		res, err = cmp.RenderLocal(ctx, tgt, app, s, local)
	} else {
		res, err = cmp.Render(ctx, tgt, app, s, RenderOptions{})
	}
	if err != nil {
		return nil, err
	}
	result, err := cmp.diffRendered(ctx, tgt, app, res, s)
	if err != nil {
		return nil, err
	}
	return OutOfSync(result.Diffs)
}

// RenderLocal renders the folder dir (the source's path on disk) for app's
// destination as a controller would render its source, for `wavecd app
// sync --local`; single-source apps only.
func (d *Differ) RenderLocal(ctx context.Context, app *v1alpha1.Application, dir string) ([]*unstructured.Unstructured, error) {
	cmp, tgt, s, err := d.open(ctx, app)
	if err != nil {
		return nil, err
	}
	res, err := cmp.RenderLocal(ctx, tgt, app, s, dir)
	if err != nil {
		return nil, err
	}
	return res.Objects, nil
}

// Rendering is an app's desired objects as a render produced them.
type Rendering struct {
	Objects []*unstructured.Unstructured
	// Revisions and SourceTypes are each source's, in spec order.
	Revisions, SourceTypes []string
}

// Render renders app for its destination as a refresh does, at revision
// when it is set (single-source apps), else at the sources' target
// revisions: `argocd app manifests`.
func (d *Differ) Render(ctx context.Context, app *v1alpha1.Application, revision string) (*Rendering, error) {
	app = app.DeepCopy()
	if revision != "" {
		if app.Spec.Source == nil {
			return nil, fmt.Errorf("application %s has several sources: give a revision per source", app.Name)
		}
		app.Spec.Source.TargetRevision = revision
	}
	cmp, tgt, s, err := d.open(ctx, app)
	if err != nil {
		return nil, err
	}
	res, err := cmp.Render(ctx, tgt, app, s, RenderOptions{})
	if err != nil {
		return nil, err
	}
	return &Rendering{Objects: res.Objects, Revisions: res.Revisions, SourceTypes: res.SourceTypes}, nil
}

// open makes a Comparer for app as the controller would have it, with
// app's destination and settings.
func (d *Differ) open(ctx context.Context, app *v1alpha1.Application) (*Comparer, *destination.Target, *Settings, error) {
	control := cmp.Or(d.opts.Namespace, app.Namespace)
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(d.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connect to the Kubernetes API: %w", err)
	}
	targets, err := destination.NewTargets(d.cfg, cluster.Registry{Reader: c, Namespace: control})
	if err != nil {
		return nil, nil, nil, err
	}
	comparer := New(Options{Namespace: control, CacheDir: d.opts.CacheDir, Mirrors: d.opts.Mirrors, Reader: c})
	if err := comparer.LoadMirrors(ctx); err != nil {
		return nil, nil, nil, err
	}
	s, err := ReadSettings(ctx, c, control, SettingsOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	_, tgt, err := targets.Resolve(ctx, app)
	if err != nil {
		return nil, nil, nil, err
	}
	return comparer, tgt, &s, nil
}

// OutOfSync returns the results that differ, sorted by group, kind,
// namespace and name, with their Text, and Secret values masked in Live
// and Predicted as they are in Text.
func OutOfSync(results []diff.Result) ([]diff.Result, error) {
	var out []diff.Result
	for _, d := range results {
		if d.Status != diff.OutOfSync {
			continue
		}
		d, err := d.WithText()
		if err != nil {
			return nil, fmt.Errorf("diff %s %s/%s: %w", d.GVK.Kind, d.Namespace, d.Name, err)
		}
		if diff.IsSecret(d.GVK.GroupKind()) {
			masks := map[string]string{} // Text is masked already, with masks of its own
			d.Live, d.Predicted = diff.MaskSecretValues(d.Live, masks), diff.MaskSecretValues(d.Predicted, masks)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Join([]string{a.GVK.Group, a.GVK.Kind, a.Namespace, a.Name}, "/") < strings.Join([]string{b.GVK.Group, b.GVK.Kind, b.Namespace, b.Name}, "/")
	})
	return out, nil
}

// RenderManifests is Render for the API server, which knows no compare
// types: the objects, and each source's revision and type.
func (d *Differ) RenderManifests(ctx context.Context, app *v1alpha1.Application, revision string) ([]*unstructured.Unstructured, []string, []string, error) {
	r, err := d.Render(ctx, app, revision)
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Objects, r.Revisions, r.SourceTypes, nil
}
