package sync

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/diff"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestRemovedConfigMapKey is seed 001's warning: a key removed from a
// ConfigMap in Git must show OutOfSync and be removed by the sync.
func TestRemovedConfigMapKey(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"server-side apply with ApplyOutOfSyncOnly": {"ServerSideApply=true", "ApplyOutOfSyncOnly=true"},
		"client-side apply with ApplyOutOfSyncOnly": {"ApplyOutOfSyncOnly=true"},
	}
	for name, syncOptions := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := testenv.Get(t)
			ns := env.Namespace(t)
			ctx := testContext(t)
			run := newSyncRun(t, ns)
			run.kinds = []schema.GroupKind{configMapGK}
			var err error
			if run.opts.Sync, err = ParseSyncOptions(syncOptions); err != nil {
				t.Fatal(err)
			}
			if st, _ := run.run(ctx, fixture(t, "sync/diff-first.yaml", ns)); st.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("first sync %s: %s", st.Phase, st.Message)
			}

			second := fixture(t, "sync/diff-second.yaml", ns)
			got := diffStatuses(t, ctx, run, second)
			if diff := cmp.Diff(map[string]diff.Status{"settings": diff.OutOfSync, "untouched": diff.Synced}, got.statuses); diff != "" {
				t.Errorf("diff before the sync (-want +got):\n%s", diff)
			}
			if !strings.Contains(got.texts["settings"], `-  b: "2"`) {
				t.Errorf("diff text of settings does not show the removed key:\n%s", got.texts["settings"])
			}

			st, _ := run.run(ctx, second)
			if st.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("second sync %s: %s", st.Phase, st.Message)
			}
			var synced []string
			for _, r := range st.Result().Resources {
				synced = append(synced, r.Name)
			}
			if diff := cmp.Diff([]string{"settings"}, synced); diff != "" {
				t.Errorf("objects applied with ApplyOutOfSyncOnly (-want +got):\n%s", diff)
			}
			cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"a": "1"}, cm.Data); diff != "" {
				t.Errorf("ConfigMap data after the sync (-want +got):\n%s", diff)
			}
			got = diffStatuses(t, ctx, run, second)
			if diff := cmp.Diff(map[string]diff.Status{"settings": diff.Synced, "untouched": diff.Synced}, got.statuses); diff != "" {
				t.Errorf("diff after the sync (-want +got):\n%s", diff)
			}
		})
	}
}

type diffs struct {
	statuses map[string]diff.Status
	texts    map[string]string
}

// diffStatuses diffs desired against the cluster the way the sync does.
func diffStatuses(t *testing.T, ctx context.Context, run *syncRun, desired []*unstructured.Unstructured) diffs {
	t.Helper()
	plan, err := run.plan(ctx, desired)
	if err != nil {
		t.Fatal(err)
	}
	out := diffs{statuses: map[string]diff.Status{}, texts: map[string]string{}}
	for _, task := range plan.Tasks {
		live, err := run.cluster.GetOptional(ctx, task.Ref())
		if err != nil {
			t.Fatal(err)
		}
		opts := kube.ApplyOptions{Mode: task.Settings.Mode, DryRun: true}
		predict := diff.PredictorFunc(func(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return run.cluster.Apply(ctx, obj, opts)
		})
		res, err := diff.Compare(ctx, task.Object, live, diff.Options{Predictor: predict})
		if err == nil {
			res, err = res.WithText()
		}
		if err != nil {
			t.Fatal(err)
		}
		out.statuses[task.Object.GetName()] = res.Status
		out.texts[task.Object.GetName()] = res.Text
	}
	return out
}

func TestDryRunFailureAppliesNothing(t *testing.T) {
	env, ns, ctx, run := setup(t)
	st, exec := run.run(ctx, fixture(t, "sync/dryrun-fail.yaml", ns))
	if st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, "one or more objects failed to apply (dry run)") ||
		!strings.Contains(st.Message, "bogusField") {
		t.Fatalf("sync %s: %q, want a dry-run failure naming the bad field", st.Phase, st.Message)
	}
	if applied := eventsOf(exec.Events(), EventApply); len(applied) != 0 {
		t.Errorf("applied %v after a failed dry run", applied)
	}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "good", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap of a sync whose dry run failed: err = %v, want NotFound", err)
	}
}
