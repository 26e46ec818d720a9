package sync

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// configMaps returns n ConfigMaps in ns spread over waves waves.
func configMaps(n, waves int, ns string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, n)
	for i := range out {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("ConfigMap")
		obj.SetName(fmt.Sprintf("cm-%03d", i))
		obj.SetNamespace(ns)
		obj.SetAnnotations(map[string]string{hook.AnnotationSyncWave: fmt.Sprint(i % waves)})
		_ = unstructured.SetNestedStringMap(obj.Object, map[string]string{"key": strings.Repeat("v", 64)}, "data")
		out[i] = obj
	}
	return out
}

// BenchmarkSync500 syncs 500 ConfigMaps in 5 waves (all healthy at once)
// and, for comparison, applies the same objects with
// kubectl apply --server-side in one run. It reports both wall times and
// their ratio (target <= 1.5), with wavecd's client allowed 500 and 50
// requests per second (kubectl's own client limits itself).
func BenchmarkSync500(b *testing.B) {
	for _, qps := range []float32{500, 50} {
		b.Run(fmt.Sprintf("client-qps-%.0f", qps), func(b *testing.B) { benchmarkSync500(b, qps) })
	}
}

func benchmarkSync500(b *testing.B, qps float32) {
	env := testenv.Get(b)
	cfg := *env.Config
	cfg.QPS, cfg.Burst = qps, int(2*qps)
	cluster, err := kube.New(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	var wavecd, kubectl time.Duration
	for b.Loop() {
		b.StopTimer()
		ns, nsKubectl := env.Namespace(b), env.Namespace(b)
		file := writeManifest(b, configMaps(500, 5, nsKubectl))
		desired := configMaps(500, 5, ns)
		b.StartTimer()

		start := time.Now()
		syncOnce(b, cluster, desired, Options{AppName: "bench-" + ns, Namespace: ns, Scope: cluster, Sync: SyncOptions{ServerSideApply: true}})
		wavecd += time.Since(start)

		start = time.Now()
		out, err := execKubectl(b.Context(), env.Kubeconfig, "apply", "--server-side", "-f", file)
		if err != nil {
			b.Fatalf("kubectl: %v\n%s", err, out)
		}
		kubectl += time.Since(start)
	}
	b.ReportMetric(wavecd.Seconds()/float64(b.N), "wavecd-s/op")
	b.ReportMetric(kubectl.Seconds()/float64(b.N), "kubectl-s/op")
	b.ReportMetric(wavecd.Seconds()/kubectl.Seconds(), "ratio")
}

func writeManifest(b *testing.B, objs []*unstructured.Unstructured) string {
	var docs []string
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	file := filepath.Join(b.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	return file
}

func execKubectl(ctx context.Context, kubeconfig string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	return cmd.CombinedOutput()
}

// BenchmarkWaveAdvance measures the time from the watch event that makes a
// wave healthy (a Deployment whose pod became ready) to the first apply of
// the next wave (target < 100 ms; Argo CD waits at least 2 s).
func BenchmarkWaveAdvance(b *testing.B) {
	env := testenv.Get(b)
	cluster, err := kube.New(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		ns := env.Namespace(b)
		desired := fixture(b, "sync/gated.yaml", ns)
		unstructured.RemoveNestedField(desired[0].Object, "spec", "template", "metadata", "annotations")
		events := syncOnce(b, cluster, desired, Options{AppName: "bench-" + ns, Namespace: ns, Scope: cluster}).Events()
		healthy, ok1 := firstEvent(events, func(e Event) bool { return e.Type == EventWaveHealthy && e.Wave == 0 })
		apply, ok2 := firstEvent(events, func(e Event) bool { return e.Type == EventApply && e.Wave == 1 })
		if !ok1 || !ok2 {
			b.Fatalf("events lack the wave change: %+v", events)
		}
		total += apply.Time.Sub(healthy.Time)
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "advance-ms/op")
}

// syncOnce plans and runs one sync of desired into an empty namespace.
func syncOnce(b *testing.B, cluster *kube.Cluster, desired []*unstructured.Unstructured, opts Options) *Executor {
	plan, err := NewPlan(desired, nil, opts)
	if err != nil {
		b.Fatal(err)
	}
	exec, err := NewExecutor(cluster, plan, opts)
	if err != nil {
		b.Fatal(err)
	}
	st := &State{}
	if err := exec.Run(b.Context(), st); err != nil || st.Phase != v1alpha1.OperationSucceeded {
		b.Fatalf("sync: %v %s %s", err, st.Phase, st.Message)
	}
	return exec
}
