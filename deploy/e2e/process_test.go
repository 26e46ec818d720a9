package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavecd/wavecd/internal/testenv"
)

// hostProcess is a pod of an install whose container is a process on this
// machine.
type hostProcess struct {
	Pod      string
	UID      string
	PID      int
	Restarts int32
}

// runningProcesses returns the pods of ns matching selector whose first
// container runs as a host process (container ID process://<pid>), and
// records those processes.
func runningProcesses(ctx context.Context, env *testenv.Env, ns, selector string) ([]hostProcess, string, error) {
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, "", err
	}
	var out []hostProcess
	var state []string
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
			state = append(state, fmt.Sprintf("%s: %s, no container status", pod.Name, pod.Status.Phase))
			continue
		}
		cs := pod.Status.ContainerStatuses[0]
		state = append(state, fmt.Sprintf("%s: %s %s restarts=%d %+v", pod.Name, pod.Status.Phase, cs.ContainerID, cs.RestartCount, cs.State))
		pid, ok := strings.CutPrefix(cs.ContainerID, "process://")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || cs.State.Running == nil {
			continue
		}
		hostProcesses.add(env.Wavecd, ns, n)
		out = append(out, hostProcess{Pod: pod.Name, UID: string(pod.UID), PID: n, Restarts: cs.RestartCount})
	}
	slices.SortFunc(out, func(a, b hostProcess) int { return strings.Compare(a.Pod, b.Pod) })
	return out, strings.Join(state, "\n"), nil
}

// waitProcesses waits until want pods of ns matching selector run their
// host process.
func waitProcesses(t *testing.T, env *testenv.Env, ns, selector string, want int) []hostProcess {
	t.Helper()
	var procs []hostProcess
	testenv.EventuallyState(t, 90*time.Second, fmt.Sprintf("%d pods %s in %s running as host processes", want, selector, ns), func() (bool, string) {
		var state string
		var err error
		procs, state, err = runningProcesses(t.Context(), env, ns, selector)
		if err != nil {
			return false, err.Error()
		}
		return len(procs) == want, state
	})
	// What the package checks when the test and the cluster end relies on
	// telling these processes by their executable.
	for _, p := range procs {
		if !runsBinary(p.PID, env.Wavecd) {
			t.Fatalf("%s: pid %d does not run %s", p.Pod, p.PID, env.Wavecd)
		}
	}
	return procs
}

// cmdline is the process's command line.
func (p hostProcess) cmdline(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
	if err != nil {
		t.Fatalf("command line of %s (pid %d): %v", p.Pod, p.PID, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// environ is the process's environment.
func (p hostProcess) environ(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
	if err != nil {
		t.Fatalf("environment of %s (pid %d): %v", p.Pod, p.PID, err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// listenAddr is the address the process serves HTTP on: its last --listen
// (the local cluster appends a free loopback port to the pod's args).
func (p hostProcess) listenAddr(t *testing.T) string {
	t.Helper()
	addr := ""
	for _, arg := range p.cmdline(t) {
		if v, ok := strings.CutPrefix(arg, "--listen="); ok {
			addr = v
		}
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("%s (pid %d) listens on %q, want a loopback address", p.Pod, p.PID, addr)
	}
	return addr
}

// checkCommand asserts the process is the wavecd binary built for the
// package, running the chart's command for component in ns.
func checkCommand(t *testing.T, env *testenv.Env, p hostProcess, component, ns string) {
	t.Helper()
	args := p.cmdline(t)
	if len(args) < 2 || args[0] != env.Wavecd || args[1] != component {
		t.Errorf("%s runs %q, want %s %s ...", p.Pod, args, env.Wavecd, component)
	}
	if !slices.Contains(args, "--namespace="+ns) {
		t.Errorf("%s runs %q, want --namespace=%s from the chart", p.Pod, args, ns)
	}
}

// checkIdentity asserts the credentials the process uses (the kubeconfig
// named by its KUBECONFIG) authenticate as the pod's ServiceAccount, bound
// to the pod: the API server says so in a SelfSubjectReview.
func checkIdentity(t *testing.T, p hostProcess, ns, serviceAccount string) {
	t.Helper()
	kubeconfig := p.environ(t)["KUBECONFIG"]
	if kubeconfig == "" {
		t.Fatalf("%s (pid %d) has no KUBECONFIG", p.Pod, p.PID)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig of %s: %v", p.Pod, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the credentials of %s: %v", p.Pod, err)
	}
	user := review.Status.UserInfo
	if want := "system:serviceaccount:" + ns + ":" + serviceAccount; user.Username != want {
		t.Errorf("%s (pid %d) acts as %q, want %q", p.Pod, p.PID, user.Username, want)
	}
	if pods := user.Extra["authentication.kubernetes.io/pod-name"]; !slices.Equal(pods, authenticationv1.ExtraValue{p.Pod}) {
		t.Errorf("%s's token is bound to pods %v, want [%s]", p.Pod, pods, p.Pod)
	}
}

// reconciles sums the process's wavecd_app_reconcile_total: only the
// leader reconciles.
func reconciles(ctx context.Context, addr string) (float64, error) {
	return metricSum(ctx, addr, "wavecd_app_reconcile_total")
}

// metricSum sums the samples of metric name on the process's /metrics.
func metricSum(ctx context.Context, addr, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return sum, sc.Err()
}

// processLogPath is where the local cluster writes the process of pod in
// ns; a pod of "*" makes a glob of all of them.
func processLogPath(env *testenv.Env, ns, pod string) string {
	return filepath.Join(env.Dir, "logs", "process-"+ns+"_"+pod+".log")
}

// processLog is what the pod's process wrote.
func processLog(t *testing.T, env *testenv.Env, ns, pod string) string {
	t.Helper()
	b, err := os.ReadFile(processLogPath(env, ns, pod))
	if err != nil {
		t.Fatalf("log of %s: %v", pod, err)
	}
	return string(b)
}

// checkNoForbidden asserts the process logged no request its
// ServiceAccount was refused: the install's RBAC covers what it does.
func checkNoForbidden(t *testing.T, env *testenv.Env, ns string, p hostProcess) {
	t.Helper()
	for _, line := range strings.Split(processLog(t, env, ns, p.Pod), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("%s was refused a request: %s", p.Pod, line)
		}
	}
}
