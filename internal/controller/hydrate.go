package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/hydrate"
	"github.com/wavecd/wavecd/internal/source"
)

// hydrationOff is the UnsupportedFieldWarning of an app with a source
// hydrator when the hydrator is off.
const hydrationOff = "spec.sourceHydrator: the hydrator is off (wavecd controller --hydrator-enabled, Argo CD's hydrator.enabled); the sync source (syncSource.path at syncSource.targetBranch) is synced as it is"

// hydration runs the source hydrator for the apps that have one.
type hydration struct {
	enabled  bool
	comparer *compare.Comparer
	hydrator *hydrate.Hydrator
	// apps lists the namespace's apps, for an app's group.
	apps client.Reader
	// wake refreshes an app of the group at once after a commit that
	// holds its manifests: it hydrates (finding its manifests written) and
	// reads its sync source again.
	wake func(namespace, name string)
}

func newHydration(enabled bool, c *compare.Comparer, apps, secrets client.Reader, namespace string, wake func(namespace, name string), now func() time.Time) *hydration {
	h := &hydration{enabled: enabled, comparer: c, apps: apps, wake: wake}
	h.hydrator = &hydrate.Hydrator{Repos: c.Repos(), Now: now, WriteCredentials: func(ctx context.Context) (source.Credentials, error) {
		// Read when a hydration pushes, which is rare: the controller
		// does not watch Secrets.
		list := &corev1.SecretList{}
		if err := secrets.List(ctx, list, client.InNamespace(namespace), client.HasLabels{source.SecretTypeLabel}); err != nil {
			return nil, err
		}
		return source.WriteCredentialsFromSecrets(list.Items)
	}}
	return h
}

// group returns the other apps hydrated into the same commit as app.
func (h *hydration) group(ctx context.Context, app *v1alpha1.Application) ([]*v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := h.apps.List(ctx, list, client.InNamespace(app.Namespace)); err != nil {
		return nil, fmt.Errorf("list the applications hydrated with %s: %w", app.Name, err)
	}
	key := hydrate.GroupKey(app.Spec.SourceHydrator)
	var out []*v1alpha1.Application
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name != app.Name && other.DeletionTimestamp == nil && other.Spec.SourceHydrator != nil && hydrate.GroupKey(other.Spec.SourceHydrator) == key {
			out = append(out, other)
		}
	}
	slices.SortFunc(out, func(a, b *v1alpha1.Application) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// run hydrates req.app when that is due (see hydrate.Hydrator.Run). A
// refresh someone asked for (marked, or the refresh annotation) asks for
// a hydration too, as in Argo CD: a hard one for a hard refresh. It
// reports whether a hydration succeeded, so the sync source is read again
// now, and how soon a failed one is retried.
func (h *hydration) run(ctx context.Context, req opRequest, marked refreshKind) (bool, time.Duration) {
	app := req.app
	if app.Spec.SourceHydrator == nil || !h.enabled || app.DeletionTimestamp != nil {
		return false, 0
	}
	if kind := hydrateAsked(app, marked); kind != "" {
		if app.Annotations == nil {
			app.Annotations = map[string]string{}
		}
		if _, set := app.Annotations[v1alpha1.AnnotationHydrate]; !set {
			app.Annotations[v1alpha1.AnnotationHydrate] = kind
		}
	}
	render := func(ctx context.Context, dry *v1alpha1.Application) ([]*unstructured.Unstructured, string, error) {
		res, err := h.comparer.Render(ctx, req.target, dry, &req.settings.Settings, compare.RenderOptions{Fresh: true, SignatureKeys: compare.SignatureKeys(req.proj)})
		if err != nil {
			return nil, "", err
		}
		var sha string
		if len(res.Revisions) > 0 {
			sha = res.Revisions[0]
		}
		return res.Objects, sha, nil
	}
	group := func(ctx context.Context) ([]*v1alpha1.Application, error) { return h.group(ctx, app) }
	res := h.hydrator.Run(ctx, app, hydrate.Request{Render: render, Settings: hydrate.SettingsFrom(req.settings.Data), Group: group})
	if res.Committed {
		for _, other := range res.Group {
			h.wake(other.Namespace, other.Name)
		}
	}
	return res.Hydrated, res.Wait
}

// hydrateAsked is the hydration a refresh asks for: "hard", "normal" or
// none.
func hydrateAsked(app *v1alpha1.Application, marked refreshKind) string {
	refresh, asked := app.Annotations[AnnotationRefresh]
	switch {
	case marked == hardRefresh || refresh == string(application.RefreshHard):
		return "hard"
	case marked == askedRefresh || asked:
		return "normal"
	}
	return ""
}

// unsupported is the warning an app with a source hydrator gets when the
// hydrator is off, else "".
func (h *hydration) unsupported(app *v1alpha1.Application) string {
	if app.Spec.SourceHydrator == nil || h.enabled {
		return ""
	}
	return hydrationOff
}
