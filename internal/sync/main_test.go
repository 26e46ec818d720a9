package sync

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// fixture reads a testdata file with NAMESPACE replaced by ns.
func fixture(t testing.TB, name, ns string) []*unstructured.Unstructured {
	t.Helper()
	objs := readObjects(t, name)
	for _, obj := range objs {
		data, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "NAMESPACE", ns))
		obj.Object = nil
		if err := json.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// syncRun is one sync of desired into a test namespace.
type syncRun struct {
	t       testing.TB
	cluster *kube.Cluster
	opts    Options
	kinds   []schema.GroupKind
}

func newSyncRun(t testing.TB, ns string) *syncRun {
	t.Helper()
	env := testenv.Get(t)
	cluster, err := kube.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &syncRun{t: t, cluster: cluster, opts: Options{AppName: "app-" + ns, Namespace: ns, Scope: cluster, Prune: true}}
}

// plan reads the live objects the app tracks and plans the sync of desired.
func (r *syncRun) plan(ctx context.Context, desired []*unstructured.Unstructured) (*Plan, error) {
	r.t.Helper()
	tracking := kube.Tracking{Method: r.opts.Tracking, AppName: r.opts.AppName}
	live, err := r.cluster.ListTracked(ctx, tracking, kube.ListOptions{Kinds: r.kinds})
	if err != nil {
		r.t.Fatal(err)
	}
	return NewPlan(desired, live, r.opts)
}

// run syncs desired to the end and returns the final state and the executor.
func (r *syncRun) run(ctx context.Context, desired []*unstructured.Unstructured) (*State, *Executor) {
	r.t.Helper()
	st, exec, err := r.runUntil(ctx, desired)
	if err != nil {
		r.t.Fatalf("Run: %v\nstate: %+v", err, st)
	}
	return st, exec
}

// runUntil syncs desired from a new state and returns Run's error: for
// tests that stop a sync half-way.
func (r *syncRun) runUntil(ctx context.Context, desired []*unstructured.Unstructured) (*State, *Executor, error) {
	r.t.Helper()
	plan, err := r.plan(ctx, desired)
	if err != nil {
		r.t.Fatal(err)
	}
	st := &State{}
	exec, err := r.execute(ctx, plan, st)
	return st, exec, err
}

// execute runs plan from st (new or saved) with a new executor.
func (r *syncRun) execute(ctx context.Context, plan *Plan, st *State) (*Executor, error) {
	r.t.Helper()
	exec, err := NewExecutor(r.cluster, plan, r.opts)
	if err != nil {
		r.t.Fatal(err)
	}
	return exec, exec.Run(ctx, st)
}

// setup gives a parallel test its cluster, namespace, context and sync.
func setup(t *testing.T) (*testenv.Env, string, context.Context, *syncRun) {
	t.Helper()
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	return env, ns, testContext(t), newSyncRun(t, ns)
}

// testContext is the test's context with a deadline, so a hung wait fails.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventsOf returns the task IDs of events of type typ, in order.
func eventsOf(events []Event, typ EventType) []string {
	var out []string
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e.Task)
		}
	}
	return out
}

// firstEvent returns the first event matching, and whether there is one.
func firstEvent(events []Event, match func(Event) bool) (Event, bool) {
	for _, e := range events {
		if match(e) {
			return e, true
		}
	}
	return Event{}, false
}

var configMapGK = schema.GroupKind{Kind: "ConfigMap"}

// waitFor polls cond for up to 30 seconds; the test fails if it never holds.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
