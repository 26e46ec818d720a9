package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/testenv"
)

// haApp is the failover test's Application; its source is testdata/ha.
const haApp = "testdata/ha-app.yaml"

// TestHAFailover runs two controller replicas, kills the leader's process
// in the middle of a multi-wave sync, and checks that the standby takes
// the lease and finishes the sync, running each hook once. It logs how
// long the failover took.
func TestHAFailover(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	repo := testenv.NewGitRepo(t, withPrefix("ha", readTree(t, "testdata/ha", keep)))
	helmInstall(t, env, ns, haValues)
	procs := waitProcesses(t, env, ns, controllerPods, 2)
	hooks := countCreations(t, env, ns)

	app := readObject(t, haApp)
	app.SetNamespace(ns)
	setField(t, app, repo.Dir, "spec", "source", "repoURL")
	setField(t, app, ns, "spec", "destination", "namespace")
	applyApp(t, env, app)

	leader, standby := findLeader(t, procs)
	holder := leaseOf(t, env, ns)
	t.Logf("leader %s (pid %d), standby %s (pid %d), lease holder %s", leader.Pod, leader.PID, standby.Pod, standby.PID, holder.holder)

	// Kill the leader once wave 2 is applied: the migrate hook has run and
	// two slow waves and the PostSync hook are still to come.
	testenv.EventuallyState(t, 90*time.Second, "the sync to reach wave 2", func() (bool, string) {
		_, err := env.Client.AppsV1().Deployments(ns).Get(t.Context(), "wave-2", metav1.GetOptions{})
		_, s, _ := getApp(t, env, ns, "waves")
		return err == nil, s.String()
	})
	if _, s, _ := getApp(t, env, ns, "waves"); s.Phase != "Running" {
		t.Fatalf("the sync is not running when the leader is killed: %s", s)
	}
	if got := hooks(); got["migrate"] != 1 || got["smoke"] != 0 {
		t.Fatalf("hook Jobs created before the kill %v, want migrate only", got)
	}
	killed := time.Now()
	if err := syscall.Kill(leader.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill leader %s (pid %d): %v", leader.Pod, leader.PID, err)
	}

	took := waitTakeover(t, env, ns, holder, standby, killed)
	t.Logf("failover: leader killed -> lease acquired by the standby %s, -> its first reconcile %s",
		took.acquired.Round(time.Millisecond), took.reconciled.Round(time.Millisecond))

	testenv.EventuallyState(t, 2*time.Minute, "the sync to succeed after the failover", func() (bool, string) {
		_, s, _ := getApp(t, env, ns, "waves")
		return s.syncedHealthy() && s.Phase == "Succeeded", s.String()
	})
	if got := hooks(); got["migrate"] != 1 || got["smoke"] != 1 {
		t.Errorf("hook Jobs created %v, want migrate and smoke once each", got)
	}
	checkStillRunning(t, env, ns, standby)
	acquired := regexp.MustCompile(`(?i)acquired lease"? lock="?` + regexp.QuoteMeta(ns+"/"+controller.LeaderElectionID))
	if log := processLog(t, env, ns, standby.Pod); !acquired.MatchString(log) {
		t.Errorf("the standby %s did not log taking the lease:\n%s", standby.Pod, log)
	}
	checkKilled(t, env, ns, leader)
}

// checkKilled asserts the pod shows its process's death by SIGKILL, as a
// kubelet shows a container's: exit code 137.
func checkKilled(t *testing.T, env *testenv.Env, ns string, p hostProcess) {
	t.Helper()
	pod, err := env.Client.CoreV1().Pods(ns).Get(t.Context(), p.Pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := pod.Status.ContainerStatuses[0]
	for _, st := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if st != nil && st.ExitCode == 137 {
			return
		}
	}
	t.Errorf("the killed leader's pod %s does not show exit code 137: %+v", p.Pod, cs)
}

// findLeader tells the leader from the standby: only the leader
// reconciles, which its metrics show.
func findLeader(t *testing.T, procs []hostProcess) (leader, standby hostProcess) {
	t.Helper()
	testenv.EventuallyState(t, 60*time.Second, "one replica to reconcile", func() (bool, string) {
		var counts []float64
		for _, p := range procs {
			n, err := reconciles(t.Context(), p.listenAddr(t))
			if err != nil {
				return false, err.Error()
			}
			counts = append(counts, n)
		}
		switch {
		case counts[0] > 0 && counts[1] == 0:
			leader, standby = procs[0], procs[1]
		case counts[1] > 0 && counts[0] == 0:
			leader, standby = procs[1], procs[0]
		default:
			return false, fmt.Sprintf("reconciles by replica: %v", counts)
		}
		return true, ""
	})
	return leader, standby
}

// lease is the leader election's Lease, as far as the test reads it.
type lease struct {
	holder   string
	acquired time.Time
}

func leaseOf(t *testing.T, env *testenv.Env, ns string) lease {
	t.Helper()
	l, err := env.Client.CoordinationV1().Leases(ns).Get(t.Context(), controller.LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Lease %s: %v", controller.LeaderElectionID, err)
	}
	return leaseFrom(l)
}

func leaseFrom(l *coordinationv1.Lease) lease {
	var out lease
	if l.Spec.HolderIdentity != nil {
		out.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		out.acquired = l.Spec.AcquireTime.Time
	}
	return out
}

// takeover is how long after the kill the standby took the lease and
// first reconciled.
type takeover struct{ acquired, reconciled time.Duration }

// waitTakeover waits until another holder has the lease and the standby
// reconciles.
func waitTakeover(t *testing.T, env *testenv.Env, ns string, old lease, standby hostProcess, killed time.Time) takeover {
	t.Helper()
	var took takeover
	testenv.EventuallyState(t, 60*time.Second, "another holder to take the lease", func() (bool, string) {
		now := leaseOf(t, env, ns)
		if now.holder == "" || now.holder == old.holder {
			return false, fmt.Sprintf("held by %q", now.holder)
		}
		took.acquired = now.acquired.Sub(killed)
		return true, ""
	})
	addr := standby.listenAddr(t)
	testenv.EventuallyState(t, 60*time.Second, "the standby to reconcile", func() (bool, string) {
		n, err := reconciles(t.Context(), addr)
		if err != nil || n == 0 {
			return false, fmt.Sprintf("reconciles %v (%v)", n, err)
		}
		took.reconciled = time.Since(killed)
		return true, ""
	})
	return took
}

// countCreations watches the Jobs of ns from now on and returns a function
// that reports how many times each name was created.
func countCreations(t *testing.T, env *testenv.Env, ns string) func() map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := env.Client.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatalf("watch Jobs: %v", err)
	}
	var mu sync.Mutex
	created := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if obj, ok := ev.Object.(metav1.Object); ok {
				mu.Lock()
				created[obj.GetName()]++
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]int, len(created))
		for k, v := range created {
			out[k] = v
		}
		return out
	}
}
