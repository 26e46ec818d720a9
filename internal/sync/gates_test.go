package sync

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// startWebhookServer starts the webhook's server as its operator would, and
// removes the cluster-scoped webhook configuration of the test at its end.
func startWebhookServer(ctx context.Context, t *testing.T, run *syncRun, ns string) {
	t.Helper()
	for _, obj := range fixture(t, "sync/webhook-server.yaml", ns) {
		obj.SetNamespace(ns)
		if _, err := run.cluster.Apply(ctx, obj, kube.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = testenv.Get(t).Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "policy-"+ns, metav1.DeleteOptions{})
	})
}

// TestWaveWaitsForWebhookEndpoints: a wave that installs an admission
// webhook is done only once the webhook's Service has a ready endpoint, so
// the next wave's objects are admitted (once the API server's own cache
// has the endpoint too: applyAdmitted).
func TestWaveWaitsForWebhookEndpoints(t *testing.T) {
	env, ns, ctx, run := setup(t)
	startWebhookServer(ctx, t, run, ns)
	started := time.Now()
	st, exec := run.run(ctx, fixture(t, "sync/webhook-gate.yaml", ns))
	if st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync %s: %s", st.Phase, st.Message)
	}
	events := exec.Events()
	waiting, ok := firstEvent(events, func(e Event) bool { return e.Type == EventWaiting && e.Wave == 0 })
	want := `webhook "policy.example.com" calls Service ` + ns + `/policy-webhook, which has no ready endpoint`
	if !ok || !strings.Contains(waiting.Message, want) {
		t.Errorf("wave 0 waiting message = %q, want it to contain %q", waiting.Message, want)
	}
	apply, ok := firstEvent(events, func(e Event) bool { return e.Type == EventApply && e.Wave == 1 })
	if !ok {
		t.Fatal("the ConfigMap of wave 1 was never applied")
	}
	// The server's pod is Ready about 5 s after its container starts.
	if held := apply.Time.Sub(started); held < 4*time.Second {
		t.Errorf("wave 1 applied %v after the sync started, before the webhook could answer", held)
	}
	t.Logf("wave 1 applied %v after the sync started", apply.Time.Sub(started).Round(10*time.Millisecond))
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "policy-checked", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap of wave 1: %v", err)
	}
}

// TestWebhookWithoutGateInArgoParity: with Argo CD's health the webhook
// configuration has none, wave 1 starts at once and the API server refuses
// its object.
func TestWebhookWithoutGateInArgoParity(t *testing.T) {
	env, ns, ctx, run := setup(t)
	assessor, err := health.New(health.Options{ArgoParity: true})
	if err != nil {
		t.Fatal(err)
	}
	run.opts.Health = assessor
	startWebhookServer(ctx, t, run, ns)
	objs := fixture(t, "sync/webhook-gate.yaml", ns)
	waitWebhookCalled(ctx, t, env, run, ns, objs)
	st, _ := run.run(ctx, objs)
	if msg := st.Message + taskMessages(st); st.Phase != v1alpha1.OperationFailed || !strings.Contains(msg, "no endpoints available") {
		t.Errorf("sync %s: %s%s; want it failed by the webhook without endpoints", st.Phase, st.Message, taskMessages(st))
	}
}

// waitWebhookCalled creates the webhook's Service and configuration of
// objs (the sync then finds them as they should be) and waits until the
// API server calls the webhook and finds no endpoint for it. It learns of
// both through caches of its own, a moment after they are created: before
// that it admits a ConfigMap unchecked, or names the Service unknown,
// whatever the sync does.
func waitWebhookCalled(ctx context.Context, t *testing.T, env *testenv.Env, run *syncRun, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() != "Service" && obj.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		obj = obj.DeepCopy()
		if obj.GetKind() == "Service" {
			obj.SetNamespace(ns)
		}
		if _, err := run.cluster.Apply(ctx, obj, kube.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	testenv.Eventually(t, 30*time.Second, "the API server calling the webhook", func() bool {
		_, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "no endpoints available")
	})
}

func taskMessages(st *State) string {
	var b strings.Builder
	for _, ts := range st.Tasks {
		if ts.Message != "" {
			b.WriteString("\n" + ts.Kind + " " + ts.Name + ": " + ts.Message)
		}
	}
	return b.String()
}
