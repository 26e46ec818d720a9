package sync

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestApplyModes(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, ctx context.Context, ns string, st *State)
	tests := map[string]struct {
		before  string // synced first, when set
		setup   func(t *testing.T, ctx context.Context, ns string)
		desired string
		opts    func(o *Options, ns string)
		phase   v1alpha1.OperationPhase
		check   check
	}{
		"Replace overwrites what others added": {
			setup: func(t *testing.T, ctx context.Context, ns string) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{
					kube.AnnotationTrackingID: "app-" + ns + ":/ConfigMap:" + ns + "/c",
				}}, Data: map[string]string{"theirs": "x"}}
				if _, err := testenv.Get(t).Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			desired: "sync/replace.yaml",
			phase:   v1alpha1.OperationSucceeded,
			check: func(t *testing.T, ctx context.Context, ns string, st *State) {
				cm, err := testenv.Get(t).Client.CoreV1().ConfigMaps(ns).Get(ctx, "c", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(map[string]string{"mine": "1"}, cm.Data); diff != "" {
					t.Errorf("data (-want +got):\n%s", diff)
				}
				if msg := st.Tasks[0].Message; msg != "configmap/c replaced" {
					t.Errorf("message = %q", msg)
				}
			},
		},
		"an immutable change fails the dry run": {
			before:  "sync/job-v1.yaml",
			desired: "sync/job-v2.yaml",
			opts:    func(o *Options, _ string) { o.Sync.ServerSideApply = true },
			phase:   v1alpha1.OperationFailed,
			check: func(t *testing.T, ctx context.Context, ns string, st *State) {
				if !strings.Contains(st.Message, "(dry run)") || !strings.Contains(st.Message, "field is immutable") {
					t.Errorf("message = %q, want a dry-run failure on the immutable field", st.Message)
				}
			},
		},
		"Force deletes and recreates on an immutable change": {
			before:  "sync/job-v1.yaml",
			desired: "sync/job-v2-force.yaml",
			opts:    func(o *Options, _ string) { o.Sync.ServerSideApply = true },
			phase:   v1alpha1.OperationSucceeded,
			check: func(t *testing.T, ctx context.Context, ns string, st *State) {
				job, err := testenv.Get(t).Client.BatchV1().Jobs(ns).Get(ctx, "j", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if image := job.Spec.Template.Spec.Containers[0].Image; image != "busybox:2" {
					t.Errorf("image = %s, want the recreated Job's busybox:2", image)
				}
			},
		},
		"Validate=false lets an unknown field through": {
			desired: "sync/unknown-field.yaml",
			phase:   v1alpha1.OperationSucceeded,
		},
		"CreateNamespace creates the destination namespace, label tracking labels": {
			desired: "sync/prune-second.yaml",
			opts: func(o *Options, ns string) {
				o.Namespace, o.Sync.CreateNamespace, o.Tracking = createdNamespace(ns), true, kube.TrackingLabel
			},
			phase: v1alpha1.OperationSucceeded,
			check: func(t *testing.T, ctx context.Context, ns string, st *State) {
				client := testenv.Get(t).Client
				t.Cleanup(func() {
					_ = client.CoreV1().Namespaces().Delete(context.Background(), createdNamespace(ns), metav1.DeleteOptions{})
				})
				cm, err := client.CoreV1().ConfigMaps(createdNamespace(ns)).Get(ctx, "x", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := cm.Labels[kube.LabelInstance]; got != "app-"+ns {
					t.Errorf("instance label = %q, want app-%s", got, ns)
				}
			},
		},
		"CreateNamespace leaves an existing namespace as it is": {
			desired: "sync/prune-second.yaml",
			opts:    func(o *Options, ns string) { o.Namespace, o.Sync.CreateNamespace = ns, true },
			phase:   v1alpha1.OperationSucceeded,
			check: func(t *testing.T, ctx context.Context, ns string, st *State) {
				for _, ts := range st.Tasks {
					if ts.Type == v1alpha1.TaskNamespace && ts.Phase != v1alpha1.TaskSkipped {
						t.Errorf("namespace task %s: %s, want %s", ts.Name, ts.Phase, v1alpha1.TaskSkipped)
					}
				}
				live, err := testenv.Get(t).Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, mf := range live.ManagedFields {
					if mf.Manager == kube.FieldManager {
						t.Errorf("the existing namespace was written: %+v", mf)
					}
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := testenv.Get(t)
			ns := env.Namespace(t)
			ctx := testContext(t)
			run := newSyncRun(t, ns)
			if tc.opts != nil {
				tc.opts(&run.opts, ns)
			}
			if tc.setup != nil {
				tc.setup(t, ctx, ns)
			}
			if tc.before != "" {
				if st, _ := run.run(ctx, fixture(t, tc.before, ns)); st.Phase != v1alpha1.OperationSucceeded {
					t.Fatalf("first sync %s: %s", st.Phase, st.Message)
				}
			}
			st, _ := run.run(ctx, fixture(t, tc.desired, ns))
			if st.Phase != tc.phase {
				t.Fatalf("sync %s: %s, want %s", st.Phase, st.Message, tc.phase)
			}
			if tc.check != nil {
				tc.check(t, ctx, ns, st)
			}
		})
	}
}

// createdNamespace names the namespace CreateNamespace creates for the test
// namespace ns (by its random suffix, to stay short).
func createdNamespace(ns string) string { return "created-" + ns[len(ns)-6:] }
