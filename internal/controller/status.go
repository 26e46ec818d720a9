package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/render"
)

var applicationGK = schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind}

// refresh compares the app and puts the result into its status. It
// returns the app as it was before, for the caller to write the change
// with whatever else it decides (an automated sync's operation) in one
// patch. A failed comparison keeps the last known resources and sets
// ComparisonError.
func (r *Reconciler) refresh(ctx context.Context, tgt *target, app *v1alpha1.Application, proj *v1alpha1.AppProject, s *Settings, kind refreshKind) (*v1alpha1.Application, error) {
	base := app.DeepCopy()
	delete(app.Annotations, AnnotationRefresh)
	if len(base.Annotations) != len(app.Annotations) {
		if err := r.patchApp(ctx, app, base); err != nil {
			return nil, fmt.Errorf("clear refresh annotation: %w", err)
		}
		base = app.DeepCopy()
	}
	if err := r.compareInto(ctx, tgt, app, proj, s, compareOptions{render: renderOptions{fresh: kind == hardRefresh}}); err != nil {
		return nil, err
	}
	r.compared.set(app.Name, app.Status.ReconciledAt.Time)
	logctx.From(ctx).Debug("refreshed", "sync", app.Status.Sync.Status, "health", app.Status.Health.Status)
	return base, nil
}

// compareInto compares the app and puts the result into its status. Only
// the controller stopping is an error: a failed comparison is the
// ComparisonError condition.
func (r *Reconciler) compareInto(ctx context.Context, tgt *target, app *v1alpha1.Application, proj *v1alpha1.AppProject, s *Settings, co compareOptions) error {
	cmp, err := r.compare(ctx, tgt, app, s, co)
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		return ctxErr // the controller is stopping: no comparison happened
	}
	now := r.now()
	app.Status.ReconciledAt = nowPtr(now)
	app.Status.ObservedAt = nowPtr(now)
	app.Status.ControllerNamespace = r.opts.Namespace
	if err != nil {
		setCondition(&app.Status, v1alpha1.ApplicationConditionComparisonError, err.Error(), now)
		// The spec was compared, if unsuccessfully: the next attempt waits
		// for comparisonRetry (or a webhook), not for the next event.
		app.Status.Sync.ComparedTo = comparedTo(app)
		// As Argo CD: what Git wants is unknown, so is the sync status.
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		logctx.From(ctx).Warn("comparison failed; nothing changed in the cluster", "err", err)
	} else {
		clearCondition(&app.Status, v1alpha1.ApplicationConditionComparisonError)
		if len(cmp.warnings) > 0 {
			setCondition(&app.Status, v1alpha1.ApplicationConditionRenderWarning, strings.Join(cmp.warnings, "; "), now)
		} else {
			clearCondition(&app.Status, v1alpha1.ApplicationConditionRenderWarning)
		}
		r.applyComparison(app, cmp, now)
		r.checkOrphans(ctx, tgt, app, proj, now)
	}
	if fields := render.UnsupportedFields(app); len(fields) > 0 {
		setCondition(&app.Status, v1alpha1.ApplicationConditionUnsupportedFieldWarning, joinLines(fields), now)
	} else {
		clearCondition(&app.Status, v1alpha1.ApplicationConditionUnsupportedFieldWarning)
	}
	return nil
}

// reconciledAtMaxAge is how old status.reconciledAt may grow while quiet
// refreshes find nothing else to write.
const reconciledAtMaxAge = 10 * time.Minute

// writeRefresh writes what a refresh put into req.app's status, if that
// is not written yet. A quiet refresh that changed only the timestamps is
// not written while the written ones are recent: an idle app costs no
// writes, and its parent and the API server's watchers no events.
func (r *Reconciler) writeRefresh(ctx context.Context, req *opRequest) error {
	if req.unwritten == nil {
		return nil
	}
	base := req.unwritten
	req.unwritten = nil
	if req.quiet && onlyTimestamps(req.app, base) && base.Status.ReconciledAt != nil &&
		r.now().Sub(base.Status.ReconciledAt.Time) < reconciledAtMaxAge {
		return nil
	}
	if err := r.patchApp(ctx, req.app, base); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

func (r *Reconciler) applyComparison(app *v1alpha1.Application, cmp *comparison, now time.Time) {
	if app.DeletionTimestamp == nil {
		// As Argo CD: the deletion hooks in Git hold the app when it is
		// deleted, so the finalizers go out with the comparison.
		app.Finalizers = deleteHookFinalizers(app.Finalizers, cmp.desired)
	}
	st := &app.Status
	st.Resources = cmp.resources
	st.Sync.Status = cmp.sync
	st.Sync.ComparedTo = comparedTo(app)
	st.Sync.Revisions = nil
	if len(cmp.revisions) > 0 {
		st.Sync.Revision = cmp.revisions[0]
	}
	if app.Spec.HasMultipleSources() {
		st.Sync.Revision, st.Sync.Revisions = "", cmp.revisions
	}
	code := v1alpha1.HealthStatusCode(cmp.health.Status)
	if st.Health.Status != code || st.Health.LastTransitionTime == nil {
		st.Health.LastTransitionTime = nowPtr(now)
	}
	st.Health.Status = code
	st.Summary.Images = images(cmp.desired)
	st.SourceType, st.SourceTypes = "", nil
	switch {
	case app.Spec.HasMultipleSources():
		st.SourceTypes = cmp.sourceTypes
	case len(cmp.sourceTypes) == 1:
		st.SourceType = cmp.sourceTypes[0]
	}
}

// resourceStatuses builds status.resources and the app's health.
func (r *Reconciler) resourceStatuses(app *v1alpha1.Application, cmp *comparison, s *Settings) ([]v1alpha1.ResourceStatus, health.AppHealth) {
	liveByKey := map[string]*unstructured.Unstructured{}
	for _, l := range cmp.live {
		liveByKey[objKey(l)] = l
	}
	out := make([]v1alpha1.ResourceStatus, 0, len(cmp.diffs))
	hres := make([]health.Resource, 0, len(cmp.diffs))
	cmp.sync = v1alpha1.SyncStatusCodeSynced
	for _, d := range cmp.diffs {
		gk := d.GVK.GroupKind()
		live := liveByKey[refKey(gk, d.Namespace, d.Name)]
		rs := v1alpha1.ResourceStatus{
			Group: d.GVK.Group, Version: d.GVK.Version, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name,
			Status: v1alpha1.SyncStatusCode(d.Status), RequiresPruning: d.Extra, SyncWave: int64(hook.Wave(desiredOrLive(cmp, d, live))),
		}
		if d.Status == diff.OutOfSync && !(d.Extra && live != nil && hasCompareOption(live.GetAnnotations(), "IgnoreExtraneous")) {
			cmp.sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		out = append(out, rs)
		hres = append(hres, health.Resource{GroupKind: gk, Live: live, JustCreated: gk == applicationGK && live == nil && !d.Extra})
	}
	agg := s.Assessor.Aggregate(hres)
	for i := range out {
		if st := agg.Resources[i]; st.Status != "" {
			out[i].Health = &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(st.Status), Message: st.Message}
		}
	}
	out = append(out, hookStatuses(cmp)...)
	sort.SliceStable(out, func(i, j int) bool { return resourceLess(out[i], out[j]) })
	return out, agg
}

// hookStatuses lists the app's live hooks as Argo CD does: marked hook,
// with the wave of the hook in Git of the same name (else the live copy's),
// and no sync status or health of their own.
func hookStatuses(cmp *comparison) []v1alpha1.ResourceStatus {
	out := make([]v1alpha1.ResourceStatus, 0, len(cmp.hooks))
	for _, l := range cmp.hooks {
		gvk := l.GroupVersionKind()
		out = append(out, v1alpha1.ResourceStatus{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: l.GetNamespace(), Name: l.GetName(),
			Hook: true, SyncWave: int64(hook.Wave(desiredOrLive(cmp, diff.Result{GVK: gvk, Namespace: l.GetNamespace(), Name: l.GetName()}, l))),
		})
	}
	return out
}

func desiredOrLive(cmp *comparison, d diff.Result, live *unstructured.Unstructured) *unstructured.Unstructured {
	for _, o := range cmp.desired {
		if o.GetName() == d.Name && o.GetNamespace() == d.Namespace && o.GroupVersionKind().GroupKind() == d.GVK.GroupKind() {
			return o
		}
	}
	return live
}

func resourceLess(a, b v1alpha1.ResourceStatus) bool {
	if a.SyncWave != b.SyncWave {
		return a.SyncWave < b.SyncWave
	}
	ka := a.Group + "/" + a.Kind + "/" + a.Namespace + "/" + a.Name
	kb := b.Group + "/" + b.Kind + "/" + b.Namespace + "/" + b.Name
	return ka < kb
}

// images lists the container images of the desired workloads.
func images(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range objs {
		for _, path := range [][]string{{"spec", "template", "spec"}, {"spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
			for _, field := range []string{"containers", "initContainers"} {
				list, _, _ := unstructured.NestedSlice(o.Object, append(path, field)...)
				for _, c := range list {
					if m, ok := c.(map[string]any); ok {
						if img, ok := m["image"].(string); ok && !seen[img] {
							seen[img] = true
							out = append(out, img)
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// onlyTimestamps reports whether app differs from base in nothing but the
// comparison timestamps.
func onlyTimestamps(app, base *v1alpha1.Application) bool {
	a := app.DeepCopy()
	a.Status.ReconciledAt, a.Status.ObservedAt = base.Status.ReconciledAt, base.Status.ObservedAt
	return equality.Semantic.DeepEqual(a, base)
}
