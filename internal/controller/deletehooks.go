package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/destination"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/logctx"
)

// deleteHookFinalizers returns app's finalizers with the deletion-hook
// ones its desired state calls for: a PreDelete hook in Git asks for both
// pre-delete finalizers, a PostDelete hook for both post-delete ones, and
// neither removes them. Other finalizers are kept in their order.
func deleteHookFinalizers(finalizers []string, desired []*unstructured.Unstructured) []string {
	want := map[string]bool{}
	for _, o := range desired {
		if hook.Has(o, hook.PreDelete) {
			want[v1alpha1.FinalizerPreDelete], want[v1alpha1.FinalizerPreDeleteCleanup] = true, true
		}
		if hook.Has(o, hook.PostDelete) {
			want[v1alpha1.FinalizerPostDelete], want[v1alpha1.FinalizerPostDeleteCleanup] = true, true
		}
	}
	out := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool {
		return isDeleteHookFinalizer(f) && !want[f]
	})
	for _, f := range []string{v1alpha1.FinalizerPreDelete, v1alpha1.FinalizerPreDeleteCleanup, v1alpha1.FinalizerPostDelete, v1alpha1.FinalizerPostDeleteCleanup} {
		if want[f] && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func isDeleteHookFinalizer(f string) bool {
	return f == v1alpha1.FinalizerPreDelete || f == v1alpha1.FinalizerPreDeleteCleanup || f == v1alpha1.FinalizerPostDelete || f == v1alpha1.FinalizerPostDeleteCleanup
}

// errDeleteHookFailed is a deletion hook that ended Degraded.
var errDeleteHookFailed = errors.New("hook failed")

// runDeleteHooks creates the app's hooks of type t that are not live yet
// and reports whether all of them completed. A hook that failed is deleted
// (so a fixed one in Git can run on the next attempt) and reported as an
// error naming it. A generateName hook is named as a sync names one, with
// the deletion's time in place of the sync's, so a restart finds it again.
func (f *finalizer) runDeleteHooks(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, t hook.Type) (bool, error) {
	hooks, err := f.deleteHooks(ctx, tgt, app, s, t)
	if err != nil {
		return false, err
	}
	done, created := true, 0
	var failed []string
	for _, h := range hooks {
		live, err := tgt.Kube.GetOptional(ctx, kube.RefOf(h))
		if err != nil {
			return false, err
		}
		if live == nil {
			if _, err := tgt.Kube.Apply(ctx, h, kube.ApplyOptions{Mode: kube.Create}); err != nil && !apierrors.IsAlreadyExists(errors.Unwrap(err)) {
				return false, err
			}
			created++
			done = false
			continue
		}
		switch st := s.Assessor.Assess(live); st.Status {
		case health.Degraded:
			failed = append(failed, fmt.Sprintf("%s/%s: %s", live.GetNamespace(), live.GetName(), st.Message))
			if err := tgt.Kube.Delete(ctx, kube.RefOf(live), kube.DeleteOptions{}); err != nil {
				logctx.From(ctx).Warn("delete failed hook", "hook", live.GetName(), "err", err)
			}
		case health.Healthy, "":
		default:
			done = false
		}
	}
	if created > 0 {
		logctx.From(ctx).Info("deletion hooks created", "type", t, "count", created)
	}
	if len(failed) > 0 {
		return false, fmt.Errorf("%s %w: %s", t, errDeleteHookFailed, strings.Join(failed, "; "))
	}
	return done, nil
}

// deleteHooks renders the app and returns its hooks of type t, named and
// tracked as they are created.
func (f *finalizer) deleteHooks(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, t hook.Type) ([]*unstructured.Unstructured, error) {
	res, err := f.comparer.Render(ctx, tgt, app, &s.Settings, compare.RenderOptions{})
	if err != nil {
		return nil, fmt.Errorf("render %s hooks: %w", t, err)
	}
	var out []*unstructured.Unstructured
	for _, o := range res.Objects {
		if !hook.Has(o, t) {
			continue
		}
		o = o.DeepCopy()
		if o.GetName() == "" {
			o.SetName(deleteHookName(o.GetGenerateName(), res.Revisions, t, app))
		}
		out = append(out, o)
	}
	out, err = compare.PrepareDesired(tgt, app, out, &s.Settings)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deleteHookName names a generateName deletion hook: generateName, the
// revision's first 7 characters, the type and the deletion's Unix time.
func deleteHookName(generateName string, revisions []string, t hook.Type, app *v1alpha1.Application) string {
	rev := ""
	if len(revisions) > 0 {
		rev = revisions[0]
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	return generateName + strings.ToLower(fmt.Sprintf("%s-%s-%d", rev, t, app.DeletionTimestamp.Unix()))
}

// cleanupDeleteHooks deletes the hooks of type t whose delete policy
// matches their result (HookSucceeded for a Healthy one, HookFailed for a
// Degraded one) and reports whether none is left to wait for.
func (f *finalizer) cleanupDeleteHooks(ctx context.Context, tgt *destination.Target, app *v1alpha1.Application, s *Settings, t hook.Type) (bool, error) {
	hooks, err := f.deleteHooks(ctx, tgt, app, s, t)
	if err != nil {
		return false, err
	}
	pending := 0
	for _, h := range hooks {
		live, err := tgt.Kube.GetOptional(ctx, kube.RefOf(h))
		if err != nil {
			return false, err
		}
		if live == nil || !deleteOnCleanup(live, s.Assessor.Assess(live)) {
			continue
		}
		pending++
		if live.GetDeletionTimestamp() != nil {
			continue
		}
		if err := tgt.Kube.Delete(ctx, kube.RefOf(live), kube.DeleteOptions{}); err != nil {
			return false, err
		}
	}
	return pending == 0, nil
}

func deleteOnCleanup(o *unstructured.Unstructured, st health.Status) bool {
	policies := hook.DeletePolicies(o)
	return slices.Contains(policies, hook.HookSucceeded) && (st.Status == health.Healthy || st.Status == "") ||
		slices.Contains(policies, hook.HookFailed) && st.Status == health.Degraded
}
