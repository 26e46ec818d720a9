package hydrate

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestDue decides, in Argo CD's order, whether an app is hydrated now.
func TestDue(t *testing.T) {
	repo := testenv.NewGitRepo(t, map[string]string{"dry/cm.yaml": "a: 1\n"})
	head := repo.Git("rev-parse", "HEAD")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	spec := v1alpha1.SourceHydrator{
		DrySource:  v1alpha1.DrySource{RepoURL: repo.Dir, TargetRevision: "main", Path: "dry"},
		SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "dev"},
	}
	other := *spec.DeepCopy()
	other.SyncSource.Path = "dev2"
	op := func(phase v1alpha1.HydrateOperationPhase, finished time.Duration, s v1alpha1.SourceHydrator) *v1alpha1.HydrateOperation {
		at := metav1.NewTime(now.Add(-finished))
		return &v1alpha1.HydrateOperation{Phase: phase, FinishedAt: &at, SourceHydrator: s}
	}
	tests := map[string]struct {
		annotation string
		current    *v1alpha1.HydrateOperation
		compared   string
		want       bool
		wantWhy    string
		wantWait   time.Duration
	}{
		"never hydrated":              {want: true, wantWhy: "no previous hydrate operation"},
		"hydrated, nothing new":       {current: op(v1alpha1.HydrateOperationPhaseHydrated, time.Minute, spec), compared: head},
		"hard hydrate asked":          {annotation: "hard", current: op(v1alpha1.HydrateOperationPhaseHydrated, time.Minute, spec), compared: head, want: true, wantWhy: "hard hydrate requested"},
		"normal hydrate, nothing new": {annotation: "normal", current: op(v1alpha1.HydrateOperationPhaseHydrated, time.Minute, spec), compared: head},
		"a new dry commit":            {current: op(v1alpha1.HydrateOperationPhaseHydrated, time.Minute, spec), compared: "0123", want: true, wantWhy: "the dry revision changed"},
		"spec changed":                {current: op(v1alpha1.HydrateOperationPhaseHydrated, time.Minute, other), compared: head, want: true, wantWhy: "spec.sourceHydrator differs"},
		"interrupted":                 {current: op(v1alpha1.HydrateOperationPhaseHydrating, time.Minute, spec), compared: head, want: true, wantWhy: "a hydration did not finish"},
		"failed a minute ago":         {current: op(v1alpha1.HydrateOperationPhaseFailed, time.Minute, spec), compared: "0123", wantWait: time.Minute},
		"failed, asked again":         {annotation: "normal", current: op(v1alpha1.HydrateOperationPhaseFailed, time.Minute, spec), compared: head, want: true, wantWhy: "hydrate requested after a failure"},
		"failed three minutes ago":    {current: op(v1alpha1.HydrateOperationPhaseFailed, 3*time.Minute, spec), compared: head, want: true, wantWhy: "retrying a failed hydration"},
	}
	h := &Hydrator{Repos: source.NewRepos(source.ReposOptions{})}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SourceHydrator: spec.DeepCopy()}}
			if tc.annotation != "" {
				app.Annotations = map[string]string{v1alpha1.AnnotationHydrate: tc.annotation}
			}
			if tc.current != nil {
				app.Status.SourceHydrator = &v1alpha1.SourceHydratorStatus{CurrentOperation: tc.current, LastComparedDryRevision: tc.compared}
			}
			due, why, wait := h.due(t.Context(), app, now)
			if due != tc.want || why != tc.wantWhy || wait != tc.wantWait {
				t.Errorf("due %v %q, wait %s; want %v %q, wait %s", due, why, wait, tc.want, tc.wantWhy, tc.wantWait)
			}
		})
	}
}

// TestRunStatus: a hydration's outcome lands in status.sourceHydrator as
// Argo CD writes it, a failure keeps the last success, and the hydrate
// annotation is answered.
func TestRunStatus(t *testing.T) {
	repo := testenv.NewGitRepo(t, map[string]string{"dry/cm.yaml": "a: 1\n"})
	head := repo.Git("rev-parse", "HEAD")
	h := &Hydrator{Repos: source.NewRepos(source.ReposOptions{})}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.AnnotationHydrate: "hard"}},
		Spec: v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
			DrySource:  v1alpha1.DrySource{RepoURL: repo.Dir, TargetRevision: "main", Path: "dry"},
			SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "dev"},
		}},
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	ok := Request{Settings: SettingsFrom(nil), Render: func(context.Context, *v1alpha1.Application) ([]*unstructured.Unstructured, string, error) {
		return []*unstructured.Unstructured{cm}, head, nil
	}}
	if res := h.Run(t.Context(), app, ok); !res.Hydrated {
		t.Fatalf("not hydrated: %+v", app.Status.SourceHydrator.CurrentOperation)
	}
	st := app.Status.SourceHydrator
	hydratedSHA := repo.Git("rev-parse", "env/dev")
	if st.CurrentOperation.Phase != v1alpha1.HydrateOperationPhaseHydrated || st.CurrentOperation.HydratedSHA != hydratedSHA ||
		st.LastSuccessfulOperation == nil || st.LastSuccessfulOperation.DrySHA != head || st.LastComparedDryRevision != head {
		t.Errorf("status after success: %+v, current %+v", st, st.CurrentOperation)
	}
	if _, asked := app.Annotations[v1alpha1.AnnotationHydrate]; asked {
		t.Error("the hydrate annotation stays")
	}
	app.Annotations = map[string]string{v1alpha1.AnnotationHydrate: "hard"}
	broken := Request{Render: func(context.Context, *v1alpha1.Application) ([]*unstructured.Unstructured, string, error) {
		return nil, "", errors.New(`kustomize build dry: missing resource "x.yaml"`)
	}}
	if res := h.Run(t.Context(), app, broken); res.Hydrated || res.Wait != RetryAfter {
		t.Errorf("a failed render: %+v", res)
	}
	if got, want := st.CurrentOperation.Message, `Failed to hydrate: failed to get manifests: kustomize build dry: missing resource "x.yaml"`; got != want ||
		st.CurrentOperation.Phase != v1alpha1.HydrateOperationPhaseFailed {
		t.Errorf("failure: %s %q, want %q", st.CurrentOperation.Phase, got, want)
	}
	if st.LastSuccessfulOperation.HydratedSHA != hydratedSHA || repo.Git("rev-parse", "env/dev") != hydratedSHA {
		t.Error("a failed hydration changed the last success or the branch")
	}
}
