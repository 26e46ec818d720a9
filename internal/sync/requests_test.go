package sync

import (
	"context"
	"fmt"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// knownNamespaces is a NamespaceLister of a fixed set.
type knownNamespaces map[string]bool

func (k knownNamespaces) NamespaceExists(_ context.Context, name string) bool { return k[name] }

// TestSyncRequests counts the API requests of syncs against a real API
// server: a sync that creates one object and nothing else skips its dry
// run (the creation checks the same), a CreateNamespace of a namespace
// known to exist asks nothing, and a lone creation that fails leaves
// nothing behind, as a failed dry run would.
func TestSyncRequests(t *testing.T) {
	env := testenv.Get(t)
	tests := map[string]struct {
		objects         int
		existing        bool
		createNamespace bool
		knownNamespace  bool
		argoParity      bool
		invalid         bool
		want            map[string]int
		wantPhase       v1alpha1.OperationPhase
	}{
		"one new object": {
			objects: 1, want: map[string]int{"create configmaps": 1},
		},
		"one new object, Argo CD parity dry-runs it": {
			objects: 1, argoParity: true, want: map[string]int{"create configmaps": 2},
		},
		"two new objects are dry-run first": {
			objects: 2, want: map[string]int{"create configmaps": 4},
		},
		"one object that changed is dry-run": {
			objects: 1, existing: true, want: map[string]int{"get configmaps": 1, "patch configmaps": 2},
		},
		"CreateNamespace of a namespace known to exist": {
			objects: 1, createNamespace: true, knownNamespace: true,
			want: map[string]int{"create configmaps": 1},
		},
		"CreateNamespace of a namespace not known": {
			objects: 1, createNamespace: true,
			want: map[string]int{"create namespaces": 1, "create configmaps": 1},
		},
		"a lone creation that fails": {
			objects: 1, invalid: true, wantPhase: v1alpha1.OperationFailed,
			want: map[string]int{"create configmaps": 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ns, ctx, run := setup(t)
			desired := configMaps(tc.objects, 1, ns)
			if tc.invalid {
				_ = unstructured.SetNestedStringMap(desired[0].Object, map[string]string{"not a key!": "v"}, "data")
			}
			run.kinds = append(run.kinds, configMapGK)
			if tc.existing {
				run.run(ctx, configMaps(tc.objects, 1, ns)) // uncounted
				_ = unstructured.SetNestedStringMap(desired[0].Object, map[string]string{"key": "changed"}, "data")
			}
			run.opts.Sync.CreateNamespace, run.opts.ArgoParity = tc.createNamespace, tc.argoParity
			if tc.knownNamespace {
				run.opts.Namespaces = knownNamespaces{ns: true}
			}
			st, _, counted := run.counted(ctx, env, desired)
			wantPhase := tc.wantPhase
			if wantPhase == "" {
				wantPhase = v1alpha1.OperationSucceeded
			}
			if st.Phase != wantPhase {
				t.Errorf("sync ended %s (%s), want %s", st.Phase, st.Message, wantPhase)
			}
			if diff := cmp.Diff(tc.want, counted.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if tc.invalid {
				live, err := run.cluster.GetOptional(ctx, kube.RefOf(desired[0]))
				if err != nil || live != nil {
					t.Errorf("the failed creation left %v (%v)", live, err)
				}
			}
		})
	}
}

// counted plans and runs the sync of desired to its end with a cluster
// client whose requests are counted.
func (r *syncRun) counted(ctx context.Context, env *testenv.Env, desired []*unstructured.Unstructured) (*State, *Executor, *requestCount) {
	r.t.Helper()
	counted := &requestCount{}
	cfg := *env.Config
	kube.CountRequests(&cfg, counted.add)
	cluster, err := kube.New(&cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	plan, err := r.plan(ctx, desired)
	if err != nil {
		r.t.Fatal(err)
	}
	st := &State{}
	exec, err := NewExecutor(cluster, plan, r.opts)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := exec.Run(ctx, st); err != nil {
		r.t.Fatal(err)
	}
	return st, exec, counted
}

// requestCount counts requests by verb and resource.
type requestCount struct {
	mu stdsync.Mutex
	n  map[string]int
}

func (c *requestCount) add(verb, resource string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[verb+" "+resource]++
}

// writes are the counted requests other than discovery and reads of the
// API's schema.
func (c *requestCount) writes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		if k != "get nonresource" {
			out[k] = v
		}
	}
	return out
}

// TestChildApplicationsCheckedLocally: a root's sync that creates child
// Applications checks them against the Application CRD's schema instead
// of a dry run each, so each child costs one creation; a child the
// schema refuses is dry-run by the server, whose error fails the sync
// with nothing created.
func TestChildApplicationsCheckedLocally(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	for name, tc := range map[string]struct {
		invalid   bool
		want      map[string]int
		wantPhase v1alpha1.OperationPhase
	}{
		"twelve children": {
			want:      map[string]int{"create applications": 12},
			wantPhase: v1alpha1.OperationSucceeded,
		},
		"twelve children, one the schema refuses": {
			invalid:   true,
			want:      map[string]int{"create applications": 1},
			wantPhase: v1alpha1.OperationFailed,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, ns, ctx, run := setup(t)
			desired := childApps(12, ns)
			if tc.invalid {
				desired[5].Object["extra"] = map[string]any{}
			}
			run.kinds = append(run.kinds, applicationGK)
			st, exec, counted := run.counted(ctx, env, desired)
			if st.Phase != tc.wantPhase {
				t.Errorf("sync ended %s (%s), want %s", st.Phase, st.Message, tc.wantPhase)
			}
			writes := counted.writes()
			for k := range writes {
				if !strings.HasPrefix(k, "create applications") {
					delete(writes, k) // the facts the check reads
				}
			}
			if diff := cmp.Diff(tc.want, writes); diff != "" {
				t.Errorf("creations (-want +got):\n%s", diff)
			}
			local := 0
			for _, e := range exec.Events() {
				if e.Type == EventDryRun && e.Message == checkedLocally {
					local++
				}
			}
			want := 12
			if tc.invalid {
				want = 11
			}
			if local != want {
				t.Errorf("%d dry runs checked locally, want %d", local, want)
			}
			if tc.invalid && !strings.Contains(st.Message, "extra") {
				t.Errorf("message %q does not name the unknown field", st.Message)
			}
		})
	}
}

// childApps returns n child Applications in ns, as a root renders them.
func childApps(n int, ns string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, n)
	for i := range out {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"spec": map[string]any{
				"project":     "default",
				"source":      map[string]any{"repoURL": "https://git.example.com/apps.git", "path": fmt.Sprintf("apps/%d", i)},
				"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": fmt.Sprintf("app-%d", i)},
			},
		}}
		obj.SetName(fmt.Sprintf("child-%02d", i))
		obj.SetNamespace(ns)
		out[i] = obj
	}
	return out
}
