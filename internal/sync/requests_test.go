package sync

import (
	"context"
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
			counted := &requestCount{}
			cfg := *env.Config
			kube.CountRequests(&cfg, counted.add)
			cluster, err := kube.New(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			run.opts.Sync.CreateNamespace, run.opts.ArgoParity = tc.createNamespace, tc.argoParity
			if tc.knownNamespace {
				run.opts.Namespaces = knownNamespaces{ns: true}
			}
			plan, err := run.plan(ctx, desired)
			if err != nil {
				t.Fatal(err)
			}
			st := &State{}
			exec, err := NewExecutor(cluster, plan, run.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := exec.Run(ctx, st); err != nil {
				t.Fatal(err)
			}
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
