package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/shard"
	"github.com/wavecd/wavecd/internal/testenv"
)

// shardValues run three sharded controller replicas with a short lease.
const shardValues = "testdata/values-sharded.yaml"

// shardLightApps is how many one-ConfigMap apps the sharding test runs
// beside its multi-wave app: 300 apps in all, which three replicas
// bootstrap, hand over and rebalance in under a minute on two cores.
const shardLightApps = 299

// TestShardedTakeover runs three sharded controller replicas over the
// multi-wave app (pinned to shard 0 by the wavecd.io/shard annotation) and
// a batch of small apps, kills the process of the replica that owns the
// multi-wave app in the middle of its sync, and checks: the two others
// take up every app, the sync completes with each hook run once, each
// app's status was written only by its replica before the kill and its
// replica after it, and the killed replica, restarted, takes
// its share back with no replica above the bound.
func TestShardedTakeover(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	files := withPrefix("ha", readTree(t, "testdata/ha", keep))
	names := []string{"waves"}
	for i := range shardLightApps {
		name := fmt.Sprintf("light-%03d", i)
		files["light/"+name+"/configmap.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  app: " + name + "\n"
		names = append(names, name)
	}
	repo := testenv.NewGitRepo(t, files)

	// The apps exist before the replicas start: each replica's first
	// assignment is the final one.
	ensureCRDs(t, env)
	waves := readObject(t, haApp)
	waves.SetNamespace(ns)
	waves.SetAnnotations(map[string]string{shard.AnnotationShard: "0"})
	setField(t, waves, repo.Dir, "spec", "source", "repoURL")
	setField(t, waves, ns, "spec", "destination", "namespace")
	applyApp(t, env, waves)
	for _, name := range names[1:] {
		app := waves.DeepCopy()
		app.SetName(name)
		app.SetAnnotations(nil)
		setField(t, app, "light/"+name, "spec", "source", "path")
		applyApp(t, env, app)
	}
	hooks := countCreations(t, env, ns)
	// An installation ID of its own: the failover test runs an app named
	// waves too, and would claim this one's objects.
	helmInstall(t, env, ns, shardValues, idValues(t, ns))
	procs := waitProcesses(t, env, ns, controllerPods, 3)
	loads := waitShards(t, procs, len(names), 90*time.Second)
	t.Logf("apps per replica: %v", loads)

	// Shard 0 is the first replica by name: the pods' names.
	owner, survivors := procs[0], procs[1:]
	testenv.EventuallyState(t, 2*time.Minute, "the multi-wave sync to reach wave 2", func() (bool, string) {
		_, err := env.Client.AppsV1().Deployments(ns).Get(t.Context(), "wave-2", metav1.GetOptions{})
		_, s, _ := getApp(t, env, ns, "waves")
		return err == nil, s.String()
	})
	if _, s, _ := getApp(t, env, ns, "waves"); s.Phase != "Running" {
		t.Fatalf("the sync is not running when its replica is killed: %s", s)
	}
	if got := hooks(); got["migrate"] != 1 || got["smoke"] != 0 {
		t.Fatalf("hook Jobs created before the kill %v, want migrate only", got)
	}
	killed := time.Now()
	if err := syscall.Kill(owner.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s (pid %d): %v", owner.Pod, owner.PID, err)
	}
	after := waitShards(t, survivors, len(names), time.Minute)
	t.Logf("takeover: %s (pid %d) killed -> its apps served by the others after %s: %v",
		owner.Pod, owner.PID, time.Since(killed).Round(100*time.Millisecond), after)

	testenv.EventuallyState(t, 2*time.Minute, "the multi-wave sync to succeed after the takeover", func() (bool, string) {
		_, s, _ := getApp(t, env, ns, "waves")
		return s.syncedHealthy() && s.Phase == "Succeeded", s.String()
	})
	waitSyncedHealthy(t, env, ns, names, 2*time.Minute)
	if got := hooks(); got["migrate"] != 1 || got["smoke"] != 1 {
		t.Errorf("hook Jobs created %v, want migrate and smoke once each", got)
	}
	checkStatusWriters(t, env, ns, names, podsOf(procs), podsOf(survivors), owner.Pod)

	// The killed process restarts after its back-off and joins again.
	procs = waitProcesses(t, env, ns, controllerPods, 3)
	rejoined := waitShards(t, procs, len(names), 90*time.Second)
	limit := shard.Capacity(len(names), 3)
	for pod, n := range rejoined {
		if n == 0 || n > limit {
			t.Errorf("after the rejoin %s serves %d apps, want 1 to %d: %v", pod, n, limit, rejoined)
		}
	}
	t.Logf("after the rejoin: %v", rejoined)
}

// waitShards waits until the replicas procs serve every one of total apps
// between them, each some, and returns how many each serves (by pod).
func waitShards(t *testing.T, procs []hostProcess, total int, timeout time.Duration) map[string]int {
	t.Helper()
	loads := map[string]int{}
	testenv.EventuallyState(t, timeout, fmt.Sprintf("%d replicas to serve the %d apps", len(procs), total), func() (bool, string) {
		sum := 0
		for _, p := range procs {
			n, err := shardApps(t.Context(), p.listenAddr(t))
			if err != nil {
				return false, err.Error()
			}
			loads[p.Pod] = n
			sum += n
		}
		ok := sum == total
		for _, n := range loads {
			ok = ok && n > 0
		}
		return ok, fmt.Sprintf("apps per replica %v", loads)
	})
	return loads
}

// shardApps reads wavecd_shard_apps from the replica's /metrics.
func shardApps(ctx context.Context, addr string) (int, error) {
	n, err := metricSum(ctx, addr, "wavecd_shard_apps")
	return int(n), err
}

// checkStatusWriters checks that each app's status was written by its
// replica before the kill and its replica after it, and by no other: the
// assignment (shard.Assign over the replicas' names, waves pinned to shard
// 0) says which. Bounded loads may move an app between two survivors when
// a replica leaves (a replica at its bound under three takes back apps
// that overflowed), so such an app has two writers though neither was
// killed.
func checkStatusWriters(t *testing.T, env *testenv.Env, ns string, names, before, after []string, killedPod string) {
	t.Helper()
	apps := make([]shard.App, len(names))
	for i, name := range names {
		apps[i] = shard.App{Key: name, Shard: -1}
	}
	apps[0].Shard = 0 // waves
	was, now := shard.Assign(apps, before), shard.Assign(apps, after)
	killed := shard.FieldManager(killedPod)
	moved, between := 0, 0
	for _, name := range names {
		app, _, err := getApp(t, env, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		writers := statusWriters(app)
		allowed := []string{shard.FieldManager(was[name]), shard.FieldManager(now[name])}
		if len(writers) == 0 || slices.ContainsFunc(writers, func(w string) bool { return !slices.Contains(allowed, w) }) {
			t.Errorf("app %s: status written by %v, want its replica before the kill and after it %v", name, writers, allowed)
			continue
		}
		switch {
		case len(writers) == 2 && slices.Contains(writers, killed):
			moved++
		case len(writers) == 2:
			between++
		}
	}
	t.Logf("%d of the killed replica's apps were written by it and its successor; %d moved between survivors", moved, between)
	if moved == 0 {
		t.Errorf("no app of the killed replica %s was written by another replica", killedPod)
	}
}

// podsOf names the replicas of procs.
func podsOf(procs []hostProcess) []string {
	out := make([]string, len(procs))
	for i, p := range procs {
		out[i] = p.Pod
	}
	return out
}

// statusWriters are the controller replicas that wrote the app's status.
func statusWriters(app *unstructured.Unstructured) []string {
	var out []string
	for _, f := range app.GetManagedFields() {
		if strings.HasPrefix(f.Manager, shard.FieldManager("")) && f.FieldsV1 != nil &&
			strings.Contains(f.FieldsV1.GetRawString(), `"f:status"`) && !slices.Contains(out, f.Manager) {
			out = append(out, f.Manager)
		}
	}
	sort.Strings(out)
	return out
}
