package eksaddons

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// operatorKill kills the Tigera operator's process once, by its process
// id, as soon as it has started to make Calico (calico-system exists) and
// before calico-node does: a crash mid-work.
type operatorKill struct {
	mu     sync.Mutex
	pid    int
	at     time.Time
	failed string
}

// strike waits for the moment and kills; it gives up when ctx ends.
func (k *operatorKill) strike(ctx context.Context, cfg *rest.Config) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		k.fail(err.Error())
		return
	}
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if _, err := c.CoreV1().Namespaces().Get(ctx, "calico-system", metav1.GetOptions{}); err != nil {
			continue
		}
		if _, err := c.AppsV1().DaemonSets("calico-system").Get(ctx, "calico-node", metav1.GetOptions{}); err == nil {
			k.fail("calico-node existed before the operator could be killed")
			return
		}
		pid := operatorPID(ctx, c)
		if pid == 0 {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			k.fail("kill " + strconv.Itoa(pid) + ": " + err.Error())
			return
		}
		k.mu.Lock()
		k.pid, k.at = pid, time.Now()
		k.mu.Unlock()
		return
	}
}

func (k *operatorKill) fail(msg string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failed = msg
}

// operatorPID is the process running the tigera-operator pod, 0 when none.
func operatorPID(ctx context.Context, c kubernetes.Interface) int {
	pods, err := c.CoreV1().Pods("tigera-operator").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=tigera-operator"})
	if err != nil {
		return 0
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			continue
		}
		if id, ok := strings.CutPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://"); ok {
			pid, _ := strconv.Atoi(id)
			return pid
		}
	}
	return 0
}

// TestOperatorKilledMidBootstrap is the chaos harness's operator case: the
// health-gated bootstrap with a static node group, whose Tigera operator
// is killed (SIGKILL, by its process id) after it started to make Calico
// and before calico-node exists. Its pod restarts it as a kubelet would
// (its restart count says so), the operator picks up where it was, and the
// bootstrap converges with everything made: nothing is lost.
func TestOperatorKilledMidBootstrap(t *testing.T) {
	corpus, bin, mirror := prepare(t)
	kill := &operatorKill{}
	run, state := rehearseWith(t, corpus, bin, mirror, "gated-static-group", report.Converged, kill.strike)
	kill.mu.Lock()
	pid, at, failed := kill.pid, kill.at, kill.failed
	kill.mu.Unlock()
	if failed != "" || pid == 0 {
		t.Fatalf("the operator was not killed: %s", failed)
	}
	t.Logf("killed the Tigera operator (pid %d) at %s; converged at %.1fs", pid, at.Format(time.TimeOnly), run.At)
	if run.Verdict != report.Converged {
		t.Fatalf("verdict %s (%s), want converged after the operator's restart", run.Verdict, run.Reason)
	}
	if state.operatorRestarts < 1 {
		t.Errorf("the operator's pod shows %d restarts, want the kill counted", state.operatorRestarts)
	}
	checkCalicoUp(t, run, state)
	checkAddonsSynced(t, run, state)
}
