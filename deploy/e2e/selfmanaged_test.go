package e2e

import (
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv"
)

const (
	// selfManagedDir is the example: the Application wavecd and its values.
	selfManagedDir = "../../examples/self-managed"
	// selfManagedValues are the test's values over the example's: the
	// controller as a host process, no server.
	selfManagedValues = "testdata/values-self-managed.yaml"
	// probeApp deploys a ConfigMap that a health check added to argocd-cm
	// through Git turns Degraded.
	probeApp = "testdata/probe-app.yaml"
	// healthCheckKey is the argocd-cm key of that health check.
	healthCheckKey = "resource.customizations.health.ConfigMap"
)

// brokenConfigMapCheck makes a ConfigMap whose data.state is "broken"
// Degraded; every other ConfigMap stays Healthy.
const brokenConfigMapCheck = `hs = {status = "Healthy", message = ""}
if obj.data ~= nil and obj.data.state == "broken" then
  hs.status = "Degraded"
  hs.message = "data.state is broken"
end
return hs
`

// TestSelfManaged seeds wavecd with helm install, hands the install over
// to an Application whose source is the chart in Git (as
// examples/self-managed does), then commits a health check to configs.cm:
// the running controller syncs its own argocd-cm and applies the check
// without a restart.
func TestSelfManaged(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	repo := testenv.NewGitRepo(t, selfManagedRepo(t))
	release := helmInstall(t, env, ns, selfManagedDir+"/values.yaml", selfManagedValues)
	ctrl := waitProcesses(t, env, ns, controllerPods, 1)[0]

	self := readObject(t, selfManagedDir+"/wavecd.yaml")
	self.SetNamespace(ns)
	setField(t, self, repo.Dir, "spec", "source", "repoURL")
	setField(t, self, release, "spec", "source", "helm", "releaseName")
	setField(t, self, ns, "spec", "destination", "namespace")
	files, _, _ := unstructured.NestedStringSlice(self.Object, "spec", "source", "helm", "valueFiles")
	if len(files) != 1 || files[0] != "../../../examples/self-managed/values.yaml" {
		t.Fatalf("the example's valueFiles are %q: update selfManagedRepo", files)
	}
	// The same values, in the same order, as the helm install above.
	files = append(files, "../../../e2e/values.yaml")
	if err := unstructured.SetNestedStringSlice(self.Object, files, "spec", "source", "helm", "valueFiles"); err != nil {
		t.Fatal(err)
	}
	probe := readObject(t, probeApp)
	probe.SetNamespace(ns)
	setField(t, probe, repo.Dir, "spec", "source", "repoURL")
	setField(t, probe, ns, "spec", "destination", "namespace")
	applyApp(t, env, self)
	applyApp(t, env, probe)
	waitSyncedHealthy(t, env, ns, []string{"wavecd", "probe"}, 2*time.Minute)

	repo.Commit(map[string]string{"e2e/values.yaml": withHealthCheck(t, readFile(t, selfManagedValues))}, "add a ConfigMap health check")
	refreshApp(t, env, ns, "wavecd")
	testenv.EventuallyState(t, 90*time.Second, "the controller to sync the health check into argocd-cm", func() (bool, string) {
		cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "argocd-cm", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, s, _ := getApp(t, env, ns, "wavecd")
		return cm.Data[healthCheckKey] == brokenConfigMapCheck, "wavecd: " + s.String()
	})
	testenv.EventuallyState(t, 60*time.Second, "the probe app to turn Degraded", func() (bool, string) {
		_, s, _ := getApp(t, env, ns, "probe")
		return s.Health == "Degraded", "probe: " + s.String()
	})
	waitSyncedHealthy(t, env, ns, []string{"wavecd"}, time.Minute)
	checkStillRunning(t, env, ns, ctrl)
	if pods := waitProcesses(t, env, ns, controllerPods, 1); pods[0].UID != ctrl.UID {
		t.Errorf("controller pod replaced: %s -> %s", ctrl.Pod, pods[0].Pod)
	}
}

// selfManagedRepo is what the example's Git repository holds: the chart,
// the example, the test's values and the probe app's ConfigMap.
func selfManagedRepo(t *testing.T) map[string]string {
	t.Helper()
	files := withPrefix("deploy/helm/wavecd", readTree(t, chartDir, keep))
	for p, c := range withPrefix("examples/self-managed", readTree(t, selfManagedDir, keep)) {
		files[p] = c
	}
	files["e2e/values.yaml"] = readFile(t, selfManagedValues)
	files["probe/configmap.yaml"] = readFile(t, "testdata/probe/configmap.yaml")
	return files
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withHealthCheck adds brokenConfigMapCheck to the values' configs.cm.
func withHealthCheck(t *testing.T, values string) string {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(vals, brokenConfigMapCheck, "configs", "cm", healthCheckKey); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(vals)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
