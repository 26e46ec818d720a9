package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestRetryResumesAfterAPIServerOutage: a sync that fails and retries,
// then meets an API server outage, resumes within its backoff once the
// server is back, instead of having spent its retries (and grown its
// backoff) on attempts that could not reach the server.
func TestRetryResumesAfterAPIServerOutage(t *testing.T) {
	h := newHarness(t)
	ns := h.env.Namespace(t)
	target := ns + "-later" // created only once the API server is back
	repo := testenv.NewGitRepo(t, map[string]string{"app/cm.yaml": fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\ndata:\n  a: b\n", target)})
	if err := installSettings(context.Background(), h.kube, ns); err != nil {
		t.Fatal(err)
	}
	ctrl := &controllerProc{bin: h.wavecd, kubeconfig: h.env.Kubeconfig, ns: ns, cacheDir: t.TempDir(),
		logPath: filepath.Join(h.logDir, "retry-after-outage.log")}
	if err := ctrl.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.stop)
	if err := ctrl.waitReady(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(`
metadata: {name: retried, namespace: %s}
spec:
  project: default
  source: {repoURL: %s, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy:
    automated: {}
    retry: {limit: 5, backoff: {duration: 2s, factor: 5, maxDuration: 3m}}
`, ns, repo.Dir, ns)), app); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := h.kube.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	waitApp(t, h, key, 60*time.Second, "a first failed attempt", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && strings.HasPrefix(op.Message, "Retrying attempt #1")
	})
	api := apiServer{env: h.env}
	if err := api.stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Retries that counted during the outage would wait 2 s, then 10 s,
	// then 50 s: the last one long after the server is back.
	time.Sleep(25 * time.Second)
	if err := api.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: target}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.kube.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: target}})
	})
	// The next attempts come at once, then within 10 s.
	waitApp(t, h, key, 20*time.Second, "the sync to succeed once the API server is back", func(a *v1alpha1.Application) bool {
		op := a.Status.OperationState
		return op != nil && op.Phase == v1alpha1.OperationSucceeded
	})
}

func waitApp(t *testing.T, h *harness, key client.ObjectKey, timeout time.Duration, what string, cond func(*v1alpha1.Application) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	a := &v1alpha1.Application{}
	for time.Now().Before(deadline) {
		if err := h.kube.Get(context.Background(), key, a); err == nil && cond(a) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, describe(a))
}
