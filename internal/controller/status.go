package controller

import (
	"context"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/render"
)

// refresh answers a refresh request (the refresh annotation goes) and
// compares the app, putting the result into its status. A failed
// comparison keeps the last known resources and sets ComparisonError.
func (r *Reconciler) refresh(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, s *Settings, kind refreshKind) error {
	delete(app.Annotations, AnnotationRefresh)
	start := time.Now()
	ro := compare.RenderOptions{Fresh: kind == hardRefresh}
	if kind == normalRefresh {
		ro.RevisionMaxAge = revisionMaxAge(s)
	}
	if err := r.compareInto(ctx, tgt, app, proj, s, compare.CompareOptions{Render: ro}); err != nil {
		return err
	}
	r.compared.set(r.key(app), app.Status.ReconciledAt.Time)
	r.compared.setTook(r.key(app), time.Since(start))
	logctx.From(ctx).Debug("refreshed", "sync", app.Status.Sync.Status, "health", app.Status.Health.Status)
	return nil
}

// revisionReuse is how long the refs of a repository, once listed, answer
// the resolutions of refreshes nobody asked for: the apps of one
// repository refreshing in a round list its refs a few times, not once
// each. A refresh someone asked for (a webhook's) lists them at once.
const revisionReuse = 10 * time.Second

// revisionMaxAge is revisionReuse, at most a tenth of the reconciliation
// timeout.
func revisionMaxAge(s *Settings) time.Duration {
	return min(revisionReuse, s.ReconcileTimeout/10)
}

// compareInto compares the app and puts the result into its status. Only
// the controller stopping is an error: a failed comparison is the
// ComparisonError condition.
func (r *Reconciler) compareInto(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, s *Settings, co compare.CompareOptions) error {
	co.Memo = true
	co.Render.SignatureKeys = compare.SignatureKeys(proj)
	cmp, err := r.comparer.Compare(ctx, tgt, app, &s.Settings, co)
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		return ctxErr // the controller is stopping: no comparison happened
	}
	now := r.now()
	app.Status.ReconciledAt = nowPtr(now)
	app.Status.ObservedAt = nowPtr(now)
	app.Status.ControllerNamespace = r.opts.Namespace
	if err != nil {
		application.SetCondition(&app.Status, v1alpha1.ApplicationConditionComparisonError, err.Error(), now)
		// The spec was compared, if unsuccessfully: the next attempt waits
		// for comparisonRetry (or a webhook), not for the next event.
		app.Status.Sync.ComparedTo = comparedTo(app)
		// As Argo CD: what Git wants is unknown, so is the sync status.
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		logctx.From(ctx).Warn("comparison failed; nothing changed in the cluster", "err", err)
	} else {
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionComparisonError)
		if len(cmp.Warnings) > 0 {
			application.SetCondition(&app.Status, v1alpha1.ApplicationConditionRenderWarning, strings.Join(cmp.Warnings, "; "), now)
		} else {
			application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionRenderWarning)
		}
		r.applyComparison(app, cmp, now)
		r.router.watchGates(ctx, tgt, r.key(app), cmp.Gates)
		r.checkOrphans(ctx, tgt, app, proj, now)
	}
	fields := render.UnsupportedFields(app)
	if off := r.hydration.unsupported(app); off != "" {
		fields = append([]string{off}, fields...)
	}
	if len(fields) > 0 {
		application.SetCondition(&app.Status, v1alpha1.ApplicationConditionUnsupportedFieldWarning, joinLines(fields), now)
	} else {
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionUnsupportedFieldWarning)
	}
	return nil
}

// reconciledAtMaxAge is how old status.reconciledAt may grow while quiet
// refreshes find nothing else to write (see refreshIfDue).
const reconciledAtMaxAge = 10 * time.Minute

func (r *Reconciler) applyComparison(app *v1alpha1.Application, cmp *compare.Comparison, now time.Time) {
	if app.DeletionTimestamp == nil {
		// As Argo CD: the deletion hooks in Git hold the app when it is
		// deleted, so the finalizers go out with the comparison.
		app.Finalizers = deleteHookFinalizers(app.Finalizers, cmp.Desired)
	}
	st := &app.Status
	st.Resources = cmp.Resources
	st.Sync.Status = cmp.Sync
	st.Sync.ComparedTo = comparedTo(app)
	st.Sync.Revisions = nil
	if len(cmp.Revisions) > 0 {
		st.Sync.Revision = cmp.Revisions[0]
	}
	if app.Spec.HasMultipleSources() {
		st.Sync.Revision, st.Sync.Revisions = "", cmp.Revisions
	}
	code := v1alpha1.HealthStatusCode(cmp.Health.Status)
	if st.Health.Status != code || st.Health.LastTransitionTime == nil {
		st.Health.LastTransitionTime = nowPtr(now)
	}
	st.Health.Status = code
	st.Summary.Images = cmp.Images()
	st.SourceType, st.SourceTypes = "", nil
	switch {
	case app.Spec.HasMultipleSources():
		st.SourceTypes = cmp.SourceTypes
	case len(cmp.SourceTypes) == 1:
		st.SourceType = cmp.SourceTypes[0]
	}
}

// sameSpec reports whether the last comparison used the app's current spec.
func sameSpec(c v1alpha1.ComparedTo, app *v1alpha1.Application) bool {
	src := v1alpha1.ApplicationSource{}
	if app.Spec.Source != nil {
		src = *app.Spec.Source
	}
	return reflect.DeepEqual(c.Source, src) && reflect.DeepEqual(c.Sources, app.Spec.Sources) &&
		c.Destination == app.Spec.Destination && reflect.DeepEqual(c.IgnoreDifferences, app.Spec.IgnoreDifferences)
}

func comparedTo(app *v1alpha1.Application) v1alpha1.ComparedTo {
	c := v1alpha1.ComparedTo{Destination: app.Spec.Destination, Sources: app.Spec.Sources, IgnoreDifferences: app.Spec.IgnoreDifferences}
	if app.Spec.Source != nil {
		c.Source = *app.Spec.Source
	}
	return c
}

func nowPtr(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// AnnotationCompareOptions holds an app's or an object's comparison
// options (see internal/compare).
const AnnotationCompareOptions = compare.AnnotationCompareOptions

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

// checkOrphans sets or clears the app's OrphanedResourceWarning. A listing
// that fails leaves the condition as it was.
func (r *Reconciler) checkOrphans(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, proj *v1alpha1.AppProject, now time.Time) {
	msg, err := orphanedWarning(ctx, tgt.Kube, app, proj, r.installationID())
	switch {
	case err != nil:
		logctx.From(ctx).Warn("look for orphaned resources", "err", err)
	case msg == "":
		application.ClearCondition(&app.Status, v1alpha1.ApplicationConditionOrphanedResourceWarning)
	default:
		application.SetCondition(&app.Status, v1alpha1.ApplicationConditionOrphanedResourceWarning, msg, now)
	}
}
