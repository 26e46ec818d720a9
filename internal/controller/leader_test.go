package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/metrics"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestLeaderElection runs two replicas in one namespace: only the leader
// reconciles, and when it stops the other takes the lease and carries on.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	first, firstCount := countingMetrics(t)
	h := startController(t, Options{LeaderElection: true, Metrics: first})
	waitElected(t, h.ctrl, "the first replica")
	second, secondCount := countingMetrics(t)
	standby, _ := h.runController(Options{LeaderElection: true, Metrics: second})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	h.apply(strings.ReplaceAll(guestbookApp, "REPO", repo.Dir))
	h.waitApp("guestbook", 60*time.Second, "Synced and Healthy", syncedHealthy)
	if n := secondCount(); n != 0 || firstCount() == 0 {
		t.Fatalf("reconciles: leader %v, standby %v; want only the leader's", firstCount(), n)
	}
	select {
	case <-standby.Elected():
		t.Fatal("the standby replica was elected while the leader ran")
	default:
	}
	holder := leaseHolder(t, h)

	h.stop()
	waitElected(t, standby, "the standby replica after the leader stopped")
	if now := leaseHolder(t, h); now == holder {
		t.Errorf("lease still held by %s after the leader stopped", holder)
	}
	repo.Commit(map[string]string{"guestbook/configmap.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "green")
	h.annotate("guestbook", AnnotationRefresh, "normal")
	testenv.Eventually(t, 30*time.Second, "the new leader to sync the change", func() bool {
		cm := &corev1.ConfigMap{}
		return h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, cm) == nil && cm.Data["color"] == "green"
	})
	if secondCount() == 0 {
		t.Error("the new leader synced without a reconcile counted")
	}
}

func waitElected(t *testing.T, c *Controller, who string) {
	t.Helper()
	select {
	case <-c.Elected():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s was not elected within 30s", who)
	}
}

// countingMetrics returns metrics on their own registry and a function
// that sums the reconciles they counted.
func countingMetrics(t *testing.T) (*metrics.Metrics, func() float64) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, func() float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, f := range families {
			if f.GetName() == "wavecd_app_reconcile_total" {
				for _, m := range f.GetMetric() {
					sum += m.GetCounter().GetValue()
				}
			}
		}
		return sum
	}
}

func leaseHolder(t *testing.T, h *harness) string {
	t.Helper()
	lease, err := h.env.Client.CoordinationV1().Leases(h.ns).Get(context.Background(), LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
