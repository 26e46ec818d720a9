package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv"
)

// fieldManager applies what the tests set up.
const fieldManager = "wavecd-e2e"

// parallel is how many tests run at once unless -test.parallel says
// otherwise: they mostly wait for the cluster, so more than the default
// (GOMAXPROCS, often 2) shortens the run without loading the machine.
const parallel = "6"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", parallel)
	}
	code := testenv.MainWith(m, testenv.Options{Wavecd: true})
	// The cluster has stopped: every host process it ran must be gone.
	if left := hostProcesses.alive(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: wavecd host processes outlived the cluster: %v\n", left)
		code = 1
	}
	os.Exit(code)
}

// hostProcesses records every wavecd process the tests saw, by namespace.
var hostProcesses = &processRegistry{byNamespace: map[string][]int{}}

type processRegistry struct {
	mu          sync.Mutex
	exe         string
	byNamespace map[string][]int
}

func (r *processRegistry) add(exe, ns string, pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exe = exe
	for _, p := range r.byNamespace[ns] {
		if p == pid {
			return
		}
	}
	r.byNamespace[ns] = append(r.byNamespace[ns], pid)
}

// alive returns the recorded processes of the namespaces (all when none
// is given) that still run the wavecd binary.
func (r *processRegistry) alive(namespaces ...string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(namespaces) == 0 {
		for ns := range r.byNamespace {
			namespaces = append(namespaces, ns)
		}
	}
	var out []int
	for _, ns := range namespaces {
		for _, pid := range r.byNamespace[ns] {
			if runsBinary(pid, r.exe) {
				out = append(out, pid)
			}
		}
	}
	sort.Ints(out)
	return out
}

// runsBinary reports whether pid is a live process of exe (a binary that
// was rebuilt meanwhile reads "exe (deleted)"); a reused pid is not.
func runsBinary(pid int, exe string) bool {
	got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || !strings.HasPrefix(got, exe) {
		return false
	}
	// A zombie keeps its exe link until reaped; it no longer runs.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// stopsWithNamespace deletes ns when the test ends and waits for its host
// processes to stop: a deleted pod takes its process with it.
func stopsWithNamespace(t *testing.T, env *testenv.Env, ns string) {
	t.Cleanup(func() {
		if t.Failed() {
			logProcessTails(t, env, ns)
			logAppStatuses(t, env, ns)
		}
		_ = env.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		deadline := time.Now().Add(60 * time.Second)
		for {
			left := hostProcesses.alive(ns)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("host processes %v of namespace %s still run 60s after it was deleted", left, ns)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// processTailLines is how much of each process's log a failed test shows.
const processTailLines = 40

// logProcessTails shows the end of what each host process of ns wrote, so
// a failure in CI explains itself without the cluster's directory.
func logProcessTails(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	files, _ := filepath.Glob(processLogPath(env, ns, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		lines = lines[max(0, len(lines)-processTailLines):]
		t.Logf("the last %d lines of %s:\n%s", len(lines), filepath.Base(f), strings.Join(lines, "\n"))
	}
}

// logAppStatuses shows the resources and the last sync result of each
// Application in ns.
func logAppStatuses(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	list, err := env.Dynamic.Resource(applications).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("list Applications in %s: %v", ns, err)
		return
	}
	for _, app := range list.Items {
		resources, _, _ := unstructured.NestedFieldNoCopy(app.Object, "status", "resources")
		result, _, _ := unstructured.NestedFieldNoCopy(app.Object, "status", "operationState", "syncResult")
		b, _ := yaml.Marshal(map[string]any{"resources": resources, "syncResult": result})
		t.Logf("Application %s:\n%s", app.GetName(), b)
	}
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

// chartCRDs is where the chart keeps the CRDs it installs.
const chartCRDs = "../helm/wavecd/files/crds"

// ensureCRDs installs the argoproj.io CRDs once for the package, so that
// tests installing wavecd side by side do not race to create them (each
// install then takes them over, as a second install of a real cluster
// would find them).
func ensureCRDs(t *testing.T, env *testenv.Env) {
	t.Helper()
	crdsOnce.Do(func() { crdsErr = env.ApplyCRDs(context.Background(), chartCRDs) })
	if crdsErr != nil {
		t.Fatalf("install CRDs: %v", crdsErr)
	}
}
