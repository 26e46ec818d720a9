package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appset"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/testenv"
)

// fleet is the test cluster ("home", where the controllers run) and a
// second local cluster ("edge"), with a kubeconfig holding both.
type fleet struct {
	t          *testing.T
	ns         string
	home       client.Client
	edge       client.Client
	kubeconfig string
	repo       string
}

// TestMultiCluster registers a second local cluster with `wavecd cluster
// add`, deploys to it by destination.name, generates apps for labelled
// clusters with an ApplicationSet, and unregisters it with `wavecd cluster
// rm --cleanup`: its app becomes invalid, the set prunes its generated
// app, and wavecd-manager leaves the cluster.
func TestMultiCluster(t *testing.T) {
	f := newFleet(t)
	f.run(t, "cluster-add-home.txt", "cluster", "add", "home", "--label", "deploy=yes", "--label", "env=dev")
	f.run(t, "cluster-add-edge.txt", "cluster", "add", "edge", "--label", "deploy=yes", "--label", "env=edge")
	f.checkManager(t, true)
	f.run(t, "cluster-list-fleet.json", "cluster", "list", "-o", "json")
	startControllers(t, f.ns)

	f.createApp(t, "to-edge", "edge")
	f.waitApp(t, "to-edge", "Synced and Healthy", syncedAndHealthy)
	f.checkConfigMap(t, f.edge, "to-edge-"+f.ns, true)
	f.checkConfigMap(t, f.home, "to-edge-"+f.ns, false)

	f.createSet(t)
	for _, cl := range []string{"home", "edge"} {
		f.waitApp(t, "fleet-"+cl, "Synced and Healthy", syncedAndHealthy)
	}
	f.checkConfigMap(t, f.home, "fleet-"+f.ns, true)
	f.checkConfigMap(t, f.edge, "fleet-"+f.ns, true)
	f.checkGenerated(t, "fleet-edge", "fleet-home")

	f.run(t, "cluster-rm-edge.txt", "cluster", "rm", "edge", "--cleanup")
	f.checkManager(t, false)
	f.checkGenerated(t, "fleet-home")
	f.waitApp(t, "to-edge", "an InvalidSpecError", invalidSpec("there are no clusters with this name: edge"))
	f.createApp(t, "late", "edge")
	f.waitApp(t, "late", "an InvalidSpecError", invalidSpec("application destination spec for late is invalid"))
	f.run(t, "cluster-rm-home.txt", "cluster", "rm", "home", "--cleanup")
}

func newFleet(t *testing.T) *fleet {
	ns, home := appCluster(t)
	env := testenv.Get(t)
	second := testenv.StartCluster(t, testenv.Options{Nodes: 1})
	f := &fleet{t: t, ns: ns, home: home, edge: second.AppClient(t), kubeconfig: mergeKubeconfigs(t, map[string]string{"home": env.Kubeconfig, "edge": second.Kubeconfig})}
	f.repo = newRepo(t, map[string]string{"cm/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deployed}\ndata: {by: wavecd}\n"})
	// A registered cluster the set's selector leaves out.
	stray := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster-stray", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster", "env": "stray"}},
		StringData: map[string]string{"name": "stray", "server": "https://127.0.0.1:1"},
	}
	if err := home.Create(t.Context(), stray); err != nil {
		t.Fatal(err)
	}
	return f
}

// mergeKubeconfigs writes one kubeconfig with a context per file, named
// by the map's keys; the current context is "home".
func mergeKubeconfigs(t *testing.T, files map[string]string) string {
	t.Helper()
	out := clientcmdapi.NewConfig()
	for name, path := range files {
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		kctx := cfg.Contexts[cfg.CurrentContext]
		out.Clusters[name] = cfg.Clusters[kctx.Cluster]
		out.AuthInfos[name] = cfg.AuthInfos[kctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	out.CurrentContext = "home"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// newRepo commits files to a new Git repository and returns its path.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.test", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// startControllers runs the Application and ApplicationSet controllers
// for ns until the test ends.
func startControllers(t *testing.T, ns string) {
	env := testenv.Get(t)
	apps, err := controller.New(env.Config, controller.Options{Namespace: ns, InstallationID: ns, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// As `wavecd controller` runs them: the ApplicationSet controller
	// reads and watches the apps in the Application controller's cache.
	sets, err := appset.New(env.Config, appset.Options{Namespace: ns, CacheDir: t.TempDir(), Apps: apps.AppCache()})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, "application controller", apps.Start)
	testenv.Start(t, "applicationset controller", sets.Start)
}

var (
	localPort  = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	secretHash = regexp.MustCompile(`cluster-127\.0\.0\.1-\d+`)
)

// run runs a wavecd command against the fleet and compares its output,
// with ports, Secret name hashes and versions made stable, with a golden
// file.
func (f *fleet) run(t *testing.T, golden string, args ...string) {
	t.Helper()
	out, errOut, err := runCLI(t, append(args, "--kubeconfig", f.kubeconfig, "-n", f.ns)...)
	if err != nil {
		t.Fatalf("wavecd %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	out = secretHash.ReplaceAllString(out, "cluster-127.0.0.1-HASH")
	out = localPort.ReplaceAllString(out, "127.0.0.1:PORT")
	out = serverVersion.ReplaceAllString(out, "v1.X.Y")
	assertGolden(t, golden, out)
}

// checkManager checks wavecd-manager's objects in the edge cluster: all
// there with a token, or all gone (the garbage collector deletes them
// after the ClusterRole).
func (f *fleet) checkManager(t *testing.T, want bool) {
	t.Helper()
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerRole}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRoleBinding}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: managerName}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: managerToken}},
	}
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, o := range objs {
			err := f.edge.Get(ctx, client.ObjectKeyFromObject(o), o)
			if exists := err == nil; exists != want {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("wavecd-manager in the edge cluster: want present=%v: %v", want, err)
	}
	if want && len(objs[3].(*corev1.Secret).Data[corev1.ServiceAccountTokenKey]) == 0 {
		t.Error("the wavecd-manager token Secret holds no token")
	}
}

func (f *fleet) createApp(t *testing.T, name, cluster string) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repo, Path: "cm", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: cluster, Namespace: name + "-" + f.ns},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true},
				SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
		},
	}
	if err := f.home.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// fleetSet generates one app per cluster labelled deploy=yes, each
// deploying a ConfigMap named after it into namespace fleet-NAMESPACE.
const fleetSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet}
spec:
  generators:
  - clusters:
      selector:
        matchLabels: {deploy: "yes"}
  template:
    metadata:
      name: 'fleet-{{name}}'
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: REPO, path: cm, targetRevision: main}
      destination: {server: '{{server}}', namespace: fleet-NAMESPACE}
      syncPolicy:
        automated: {prune: true}
        syncOptions: [CreateNamespace=true]
`

func (f *fleet) createSet(t *testing.T) {
	t.Helper()
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict([]byte(strings.NewReplacer("REPO", f.repo, "NAMESPACE", f.ns).Replace(fleetSet)), set); err != nil {
		t.Fatal(err)
	}
	set.Namespace = f.ns
	if err := f.home.Create(t.Context(), set); err != nil {
		t.Fatal(err)
	}
}

// checkGenerated waits until the set's apps are exactly want.
func (f *fleet) checkGenerated(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		apps := &v1alpha1.ApplicationList{}
		if err := f.home.List(ctx, apps, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		got = nil
		for _, a := range apps.Items {
			if strings.HasPrefix(a.Name, "fleet-") {
				got = append(got, a.Name)
			}
		}
		return strings.Join(got, ",") == strings.Join(want, ","), nil
	})
	if err != nil {
		t.Fatalf("generated apps %v, want %v: %v", got, want, err)
	}
}

// checkConfigMap checks whether an app deployed its ConfigMap into
// namespace of a cluster.
func (f *fleet) checkConfigMap(t *testing.T, c client.Client, namespace string, want bool) {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "deployed"}, &corev1.ConfigMap{})
	switch {
	case want && err != nil:
		t.Errorf("ConfigMap %s/deployed: %v, want it deployed", namespace, err)
	case !want && !apierrors.IsNotFound(err):
		t.Errorf("ConfigMap %s/deployed: %v, want none in this cluster", namespace, err)
	}
}

func (f *fleet) waitApp(t *testing.T, name, what string, cond func(*v1alpha1.Application) bool) {
	t.Helper()
	app := &v1alpha1.Application{}
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := f.home.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, app); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(app), nil
	})
	if err != nil {
		t.Fatalf("app %s: waiting for %s: %v; status: sync=%s health=%s conditions=%v", name, what, err,
			app.Status.Sync.Status, app.Status.Health.Status, app.Status.Conditions)
	}
}

func syncedAndHealthy(a *v1alpha1.Application) bool {
	return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == "Healthy"
}

func invalidSpec(part string) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionInvalidSpecError && strings.Contains(c.Message, part) {
				return true
			}
		}
		return false
	}
}
