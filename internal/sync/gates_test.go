package sync

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// the next wave's objects are admitted on the first try.
func TestWaveWaitsForWebhookEndpoints(t *testing.T) {
	env, ns, ctx, run := setup(t)
	startWebhookServer(ctx, t, run, ns)
	started := time.Now()
	st, exec := run.run(ctx, fixture(t, "sync/webhook-gate.yaml", ns))
	if st.Phase != OperationSucceeded {
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
	_, ns, ctx, run := setup(t)
	assessor, err := health.New(health.Options{ArgoParity: true})
	if err != nil {
		t.Fatal(err)
	}
	run.opts.Health = assessor
	startWebhookServer(ctx, t, run, ns)
	st, _ := run.run(ctx, fixture(t, "sync/webhook-gate.yaml", ns))
	// The API server names a webhook Service it has no ready endpoint
	// for, or, when its cache has not seen the Service created a moment
	// before, one it does not know yet: a webhook with no backend either way.
	msg := st.Message + taskMessages(st)
	noBackend := strings.Contains(msg, "no endpoints available") || strings.Contains(msg, `service "policy-webhook" not found`)
	if st.Phase != OperationFailed || !noBackend {
		t.Errorf("sync %s: %s%s; want it failed by the webhook without endpoints", st.Phase, st.Message, taskMessages(st))
	}
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
