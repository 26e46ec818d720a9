package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/wavecd/wavecd/internal/testenv"
)

const (
	chartDir = "../helm/wavecd"
	// processValues run the controller and the server as host processes.
	processValues = "testdata/values-process.yaml"
	// noManageValues take the controller's cluster-wide rule away.
	noManageValues = "testdata/values-no-manage.yaml"
	// haValues run two controller replicas with a short lease.
	haValues = "testdata/values-ha.yaml"

	controllerPods = "app.kubernetes.io/component=controller"
	serverPods     = "app.kubernetes.io/component=server"
)

// helmInstall installs the chart into ns as `helm install RELEASE
// deploy/helm/wavecd -n NS -f FILE...` does, taking over the CRDs the
// package installed, and stops the install's processes when the test
// ends. The release name is unique to the test: the chart's cluster-scoped
// objects are named after it.
func helmInstall(t *testing.T, env *testenv.Env, ns string, valueFiles ...string) string {
	t.Helper()
	ensureCRDs(t, env)
	release := "wavecd-" + ns[strings.LastIndexByte(ns, '-')+1:]
	vals, err := (&values.Options{ValueFiles: valueFiles}).MergeValues(nil)
	if err != nil {
		t.Fatalf("values %v: %v", valueFiles, err)
	}
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	getter := genericclioptions.NewConfigFlags(false)
	getter.KubeConfig, getter.Namespace = &env.Kubeconfig, &ns
	if err := cfg.Init(getter, ns, "secret"); err != nil {
		t.Fatalf("helm configuration: %v", err)
	}
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = release, ns
	inst.WaitStrategy = kube.HookOnlyStrategy
	inst.TakeOwnership = true
	inst.Timeout = time.Minute
	stopsWithNamespace(t, env, ns)
	if _, err := inst.RunWithContext(t.Context(), chart, vals); err != nil {
		t.Fatalf("helm install %s -n %s: %v", release, ns, err)
	}
	return release
}

// TestHelmInstall installs the chart with the controller and the server as
// host processes, checks they run the chart's commands as their
// ServiceAccounts, and has the controller sync the seed demo.
func TestHelmInstall(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	_, root := seedDemo(t, env, ns)
	release := helmInstall(t, env, ns, processValues, idValues(t, ns))

	ctrl := waitProcesses(t, env, ns, controllerPods, 1)[0]
	checkCommand(t, env, ctrl, "controller", ns)
	checkIdentity(t, ctrl, ns, release+"-controller")
	srv := waitProcesses(t, env, ns, serverPods, 1)[0]
	checkCommand(t, env, srv, "server", ns)
	checkIdentity(t, srv, ns, release+"-server")

	applyApp(t, env, root)
	waitSyncedHealthy(t, env, ns, demoApps, 2*time.Minute)
	checkInstallationID(t, env, ns)
	checkStillRunning(t, env, ns, ctrl, srv)
}

// TestHelmInstallWithoutManageRule installs the chart without the
// controller's cluster-wide rule: its Role in its own namespace still lets
// the root app create the child Applications there, but app-a may not
// create its namespace, and says which user the API server refused: the
// controller's ServiceAccount.
func TestHelmInstallWithoutManageRule(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	_, root := seedDemo(t, env, ns)
	release := helmInstall(t, env, ns, processValues, noManageValues, idValues(t, ns))
	waitProcesses(t, env, ns, controllerPods, 1)
	applyApp(t, env, root)
	refused := fmt.Sprintf("is forbidden: User %q", "system:serviceaccount:"+ns+":"+release+"-controller")
	testenv.EventuallyState(t, 90*time.Second, "app-a to report "+refused, func() (bool, string) {
		states, summary := appStates(t, env, ns, demoApps)
		a, ok := states["app-a"]
		return ok && containsFold(append(a.Conditions, a.Message), refused), summary
	})
	states, summary := appStates(t, env, ns, demoApps)
	t.Logf("without the manage rule:\n%s", summary)
	if states["app-a"].syncedHealthy() || states["app-b"].syncedHealthy() {
		t.Errorf("a child app synced without the controller's cluster-wide rule:\n%s", summary)
	}
}

// checkStillRunning asserts each process still backs its pod, never
// restarted.
func checkStillRunning(t *testing.T, env *testenv.Env, ns string, procs ...hostProcess) {
	t.Helper()
	now, _, err := runningProcesses(context.Background(), env, ns, "app.kubernetes.io/name=wavecd")
	if err != nil {
		t.Fatal(err)
	}
	byPod := map[string]hostProcess{}
	for _, p := range now {
		byPod[p.Pod] = p
	}
	for _, p := range procs {
		if got, ok := byPod[p.Pod]; !ok || got.PID != p.PID || got.Restarts != 0 {
			t.Errorf("%s: was pid %d, now %+v (present %v): the process restarted", p.Pod, p.PID, got, ok)
		}
		checkNoForbidden(t, env, ns, p)
	}
}
