package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestNamespacePerTest(t *testing.T) {
	env := Get(t)
	var names []string
	for _, sub := range []string{"first", "second"} {
		t.Run(sub, func(t *testing.T) {
			ns := env.Namespace(t)
			names = append(names, ns)
			if !strings.HasPrefix(ns, "testnamespacepertest-"+sub+"-") {
				t.Errorf("namespace %q does not name its test", ns)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same-name"}}
			if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create ConfigMap in %s: %v", ns, err)
			}
		})
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("namespaces = %v, want two distinct", names)
	}
	// Cleanup of the subtests has run: both namespaces are terminating or gone.
	for _, ns := range names {
		got, err := env.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if err == nil && got.DeletionTimestamp == nil {
			t.Errorf("namespace %s still active after its test ended", ns)
		}
	}
}

func TestPodRunsInTestNamespace(t *testing.T) {
	env := Get(t)
	ns := env.Namespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := env.Client.CoreV1().Pods(ns).Get(t.Context(), "p", metav1.GetOptions{})
		if err == nil && got.Status.Phase == corev1.PodRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod not Running within 60s: %v %+v", err, got.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStartFailsLoudly(t *testing.T) {
	tests := map[string]startOptions{
		"missing binary":            {Binary: filepath.Join(t.TempDir(), "no-such-binary"), Args: []string{"--nodes", "1"}, Timeout: 10 * time.Second},
		"binary that exits at once": {Binary: "/bin/false", Args: []string{"--nodes", "1"}, Timeout: 10 * time.Second},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			o.Dir = t.TempDir()
			p, err := startCluster(t.Context(), o)
			if err == nil {
				_ = p.stop()
				t.Fatal("startCluster succeeded, want an error")
			}
		})
	}
}

func TestStartArgs(t *testing.T) {
	abs, err := filepath.Abs("testdata/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		opts   Options
		wavecd string
		want   []string
	}{
		"zero value: two nodes": {want: []string{"--nodes", "2"}},
		"nodes":                 {opts: Options{Nodes: 3}, want: []string{"--nodes", "3"}},
		"config replaces nodes, made absolute": {
			opts: Options{Nodes: 3, Config: "testdata/cluster.yaml"},
			want: []string{"--config", abs},
		},
		"wavecd binary, then extra flags": {
			opts:   Options{Wavecd: true, Args: []string{"--node-cpu", "4"}},
			wavecd: "/repo/bin/wavecd",
			want:   []string{"--nodes", "2", "--process", "wavecd=/repo/bin/wavecd", "--node-cpu", "4"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := startArgs(tt.opts, tt.wavecd)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("start args (-want +got):\n%s", diff)
			}
		})
	}
}
