// Package e2e tests the wavecd-localcluster binary end to end: it builds the
// binary, starts real clusters in temporary directories and checks what the
// Kubernetes API, the process table and the ports show.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var binary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "localcluster-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "wavecd-localcluster")
	build := exec.Command("go", "build", "-o", binary, "../cmd/wavecd-localcluster")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build wavecd-localcluster:", err)
		return 1
	}
	return m.Run()
}

// localCluster is one cluster started by a test.
type localCluster struct {
	dir    string
	client kubernetes.Interface
}

// cli runs the binary and fails the test on error.
func cli(t testing.TB, args ...string) string {
	t.Helper()
	out, err := cliResult(args...)
	if err != nil {
		t.Fatalf("wavecd-localcluster %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// cliResult runs the binary and returns its combined output.
func cliResult(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// startCluster starts a detached cluster with --nodes in dir and stops it
// at cleanup.
func startCluster(t testing.TB, dir string, nodes int) *localCluster {
	t.Helper()
	return startClusterWith(t, dir, "--nodes", strconv.Itoa(nodes))
}

// startClusterWith starts a detached cluster with the given start flags.
func startClusterWith(t testing.TB, dir string, flags ...string) *localCluster {
	t.Helper()
	cli(t, append([]string{"start", "--dir", dir, "--detach"}, flags...)...)
	t.Cleanup(func() { cli(t, "stop", "--dir", dir) })
	return &localCluster{dir: dir, client: clientFor(t, dir)}
}

func clientFor(t testing.TB, dir string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type state struct {
	SupervisorPID int            `json:"supervisorPID"`
	Children      map[string]int `json:"children"`
	Ports         map[string]int `json:"ports"`
}

func readState(t testing.TB, dir string) state {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// processesOf lists the pids whose command line mentions dir.
func processesOf(t testing.TB, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(dir)) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// portListening reports whether something accepts connections on port.
func portListening(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
}
