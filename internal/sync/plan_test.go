package sync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// readObjects reads a multi-document YAML fixture from testdata.
func readObjects(t testing.TB, name string) []*unstructured.Unstructured {
	t.Helper()
	if name == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, obj)
	}
	return out
}

// describe renders the plan as "<phase>/<wave> <type> <Kind> <namespace/name>".
func describe(p *Plan) []string {
	var out []string
	for _, t := range p.Tasks {
		ref := t.Ref()
		name := t.name()
		if ref.Namespace != "" {
			name = ref.Namespace + "/" + name
		}
		line := fmt.Sprintf("%s/%d %s %s %s", t.SyncPhase, t.Wave, t.Type, ref.GVK.Kind, name)
		if t.Err != "" {
			line += " error: " + t.Err
		}
		out = append(out, line)
	}
	return out
}

func TestNewPlan(t *testing.T) {
	base := Options{AppName: "app", Namespace: "dest", Prune: true}
	tests := map[string]struct {
		desired, live string
		opts          func(*Options)
		want          []string
		wantErr       error
	}{
		"phases, then waves, then kind order, then name; Skip left out; helm weight is a wave": {
			desired: "plan/order.yaml",
			want: []string{
				"PreSync/0 hook Job dest/migrate",
				"Sync/-1 apply ClusterRole reader",
				"Sync/0 apply ServiceAccount dest/web",
				"Sync/0 apply ConfigMap dest/a-config",
				"Sync/0 apply ConfigMap dest/b-config",
				"Sync/0 apply Widget dest/w",
				"Sync/1 apply Service dest/web",
				"Sync/1 apply Deployment dest/web",
				"Sync/2 apply Secret dest/helm-weighted",
				"PostSync/0 hook Job dest/smoke-",
				"SyncFail/0 hook Pod dest/notify-failure",
			},
		},
		"skipping hooks leaves only resources": {
			desired: "plan/order.yaml",
			opts:    func(o *Options) { o.SkipHooks = true },
			want: []string{
				"Sync/-1 apply ClusterRole reader",
				"Sync/0 apply ServiceAccount dest/web",
				"Sync/0 apply ConfigMap dest/a-config",
				"Sync/0 apply ConfigMap dest/b-config",
				"Sync/0 apply Widget dest/w",
				"Sync/1 apply Service dest/web",
				"Sync/1 apply Deployment dest/web",
				"Sync/2 apply Secret dest/helm-weighted",
			},
		},
		"namespace and CRD move in front of their first user, in its wave": {
			desired: "plan/namespace-crd.yaml",
			want: []string{
				"Sync/-1 apply CustomResourceDefinition gadgets.example.com",
				"Sync/-1 apply Gadget g",
				"Sync/1 apply Namespace team-a",
				"Sync/1 apply ConfigMap team-a/settings",
			},
		},
		"CreateNamespace adds a namespace task first": {
			desired: "plan/prune-desired.yaml",
			opts:    func(o *Options) { o.Sync.CreateNamespace = true },
			want: []string{
				"PreSync/0 namespace Namespace dest",
				"Sync/0 apply ConfigMap dest/kept",
			},
		},
		"prune waves reversed, PruneLast after the last wave, only objects the app tracks": {
			desired: "plan/prune-desired.yaml",
			live:    "plan/prune-live.yaml",
			want: []string{
				"Sync/0 apply ConfigMap dest/kept",
				"Sync/0 prune ConfigMap dest/old-wave-3",
				"Sync/1 prune ConfigMap dest/old-wave-2",
				"Sync/2 prune ConfigMap dest/old-wave-1",
				"Sync/4 prune ConfigMap dest/old-last",
			},
		},
		"app-level PruneLast moves every prune last": {
			desired: "plan/prune-desired.yaml",
			live:    "plan/prune-live.yaml",
			opts:    func(o *Options) { o.Sync.PruneLast = true },
			want: []string{
				"Sync/0 apply ConfigMap dest/kept",
				"Sync/4 prune ConfigMap dest/old-last",
				"Sync/4 prune ConfigMap dest/old-wave-1",
				"Sync/4 prune ConfigMap dest/old-wave-2",
				"Sync/4 prune ConfigMap dest/old-wave-3",
			},
		},
		"empty desired state refuses to prune everything": {
			desired: "plan/empty.yaml",
			live:    "plan/prune-live.yaml",
			wantErr: ErrEmptyDesiredState,
		},
		"empty desired state prunes everything with allowEmpty": {
			desired: "plan/empty.yaml",
			live:    "plan/prune-live.yaml",
			opts:    func(o *Options) { o.AllowEmpty = true },
			want: []string{
				"Sync/0 prune ConfigMap dest/old-wave-3",
				"Sync/1 prune ConfigMap dest/old-wave-2",
				"Sync/2 prune ConfigMap dest/old-wave-1",
				"Sync/3 prune ConfigMap dest/kept",
				"Sync/4 prune ConfigMap dest/old-last",
			},
		},
		"shared resource is an error with FailOnSharedResource": {
			desired: "plan/shared-desired.yaml",
			live:    "plan/shared-live.yaml",
			opts:    func(o *Options) { o.Sync.FailOnSharedResource = true },
			want: []string{
				`Sync/0 apply ConfigMap dest/shared error: ConfigMap dest/shared is already managed by application "other" (FailOnSharedResource)`,
			},
		},
		"shared resource is taken over without FailOnSharedResource": {
			desired: "plan/shared-desired.yaml",
			live:    "plan/shared-live.yaml",
			want:    []string{"Sync/0 apply ConfigMap dest/shared"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := base
			if tc.opts != nil {
				tc.opts(&opts)
			}
			plan, err := NewPlan(readObjects(t, tc.desired), readObjects(t, tc.live), opts)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("NewPlan() error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, describe(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPlanSetsTracking(t *testing.T) {
	tests := map[string]struct {
		opts      Options
		wantAnno  string
		wantLabel string
	}{
		"annotation by default": {
			opts:     Options{AppName: "app", Namespace: "dest"},
			wantAnno: "app:/ConfigMap:dest/kept",
		},
		"label": {
			opts:      Options{AppName: "app", Namespace: "dest", Tracking: "label"},
			wantLabel: "app",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			plan, err := NewPlan(readObjects(t, "plan/prune-desired.yaml"), nil, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			obj := plan.Tasks[0].Object
			got := [2]string{obj.GetAnnotations()["argocd.argoproj.io/tracking-id"], obj.GetLabels()["app.kubernetes.io/instance"]}
			if diff := cmp.Diff([2]string{tc.wantAnno, tc.wantLabel}, got); diff != "" {
				t.Errorf("tracking (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPlanRejectsDuplicates(t *testing.T) {
	objs := readObjects(t, "plan/prune-desired.yaml")
	_, err := NewPlan(append(objs, objs[0].DeepCopy()), nil, Options{AppName: "app", Namespace: "dest"})
	if err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("NewPlan() error = %v, want a duplicate error", err)
	}
}
