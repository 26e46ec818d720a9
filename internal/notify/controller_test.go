package notify_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/notify"
	"github.com/wavecd/wavecd/internal/notify/notifytest"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var crdsOnce stdsync.Once

// harness runs the Application controller and the notifications
// controller against the test's namespace, with a Git repository of
// manifests and a receiver.
type harness struct {
	t    *testing.T
	ns   string
	c    client.Client
	kube kubernetes.Interface
	repo *testenv.GitRepo
	rcv  *notifytest.Receiver
	// apps is the Application controller, whose cache of the apps the
	// notifications controller reads, as `wavecd controller` runs them.
	apps *controller.Controller
	// stopNotify stops the notifications controller.
	stopNotify func()
	metrics    *countingMetrics
}

func start(t *testing.T, data map[string]string) *harness {
	t.Helper()
	return startWith(t, data, notifyOptions{shared: true})
}

// startWith is start with the notifications controller started as o
// says; without data there is no argocd-notifications-cm (configure adds
// it).
func startWith(t *testing.T, data map[string]string, o notifyOptions) *harness {
	t.Helper()
	env := testenv.Get(t)
	crdsOnce.Do(func() {
		ext, err := apiextensions.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := install.InstallCRDs(context.Background(), ext, install.CRDOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	h := &harness{t: t, ns: env.Namespace(t), c: env.AppClient(t), kube: kubernetes.NewForConfigOrDie(env.Config), rcv: notifytest.NewReceiver(t), metrics: &countingMetrics{}}
	h.repo = testenv.NewGitRepo(t, map[string]string{
		"web/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: \"1\"\n",
	})
	if data != nil {
		h.configure(data)
	}
	apps, err := controller.New(env.Config, controller.Options{Namespace: h.ns, InstallationID: h.ns, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.apps = apps
	h.run("application controller", apps.Start)
	h.startNotify(o)
	return h
}

// configure creates argocd-notifications-cm with data and the catalog,
// RECEIVER standing for the receiver's URL.
func (h *harness) configure(data map[string]string) {
	h.t.Helper()
	withCatalog, err := notify.WithCatalog(data)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range withCatalog {
		withCatalog[k] = strings.ReplaceAll(v, "RECEIVER", h.rcv.URL)
	}
	h.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName}, Data: withCatalog})
}

// notifyOptions say how startNotify starts the notifications controller.
type notifyOptions struct {
	// shared reads the apps from the Application controller's cache;
	// without it the notifications controller keeps its own.
	shared bool
	// resync is Options.Resync (default a second).
	resync time.Duration
}

// startNotify starts a notifications controller; stopNotify stops it.
func (h *harness) startNotify(o notifyOptions) {
	opts := notify.Options{Namespace: h.ns, Resync: cmp.Or(o.resync, time.Second), Metrics: h.metrics}
	if o.shared {
		opts.Apps = h.apps.AppCache()
	}
	n, err := notify.New(testenv.Get(h.t).Config, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.stopNotify = h.run("notifications controller", n.Start)
}

// run runs a component until the test ends or the returned stop.
func (h *harness) run(name string, start func(context.Context) error) (stop func()) {
	return testenv.Start(h.t, name, start)
}

func (h *harness) create(obj client.Object) {
	h.t.Helper()
	obj.SetNamespace(h.ns)
	if err := h.c.Create(context.Background(), obj); err != nil {
		h.t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}

// app creates an automated Application of the repository's web folder,
// deployed into the test's namespace, with these annotations.
func (h *harness) app(name string, annotations map[string]string) {
	h.create(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			Source:  &v1alpha1.ApplicationSource{RepoURL: h.repo.Dir, Path: "web", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{
				Server: controller.InClusterServer, Namespace: h.ns,
			},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	})
}

func (h *harness) get(name string) *v1alpha1.Application {
	h.t.Helper()
	app := &v1alpha1.Application{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, app); err != nil {
		h.t.Fatal(err)
	}
	return app
}

func (h *harness) eventually(timeout time.Duration, what string, cond func() bool) {
	h.t.Helper()
	testenv.Eventually(h.t, timeout, what, cond)
}

func settled(a *v1alpha1.Application) bool {
	return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == "Healthy" && a.Operation == nil &&
		a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
}

// events lists the Events recorded on an app, as "type reason message".
func (h *harness) events(app string) []string {
	h.t.Helper()
	list, err := h.kube.CoreV1().Events(h.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + app})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Type+" "+e.Reason+" "+e.Message)
	}
	return out
}

// countingMetrics counts what the controller reports.
type countingMetrics struct {
	mu         stdsync.Mutex
	deliveries map[string]int
}

func (m *countingMetrics) ObserveNotificationDelivery(trigger, service string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.deliveries == nil {
		m.deliveries = map[string]int{}
	}
	m.deliveries[fmt.Sprintf("%s %s %v", trigger, service, ok)]++
}

func (m *countingMetrics) ObserveNotificationTrigger(string, bool) {}

func (m *countingMetrics) count(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deliveries[key]
}

// TestDownReceiver: a receiver that answers 503 gets the first try and
// its retries, then the app carries a Warning Event naming the trigger
// and the destination, without the Secret's value, and the failed
// delivery is counted. The app syncs as if nothing happened.
func TestDownReceiver(t *testing.T) {
	h := start(t, map[string]string{
		"service.webhook.pager": "url: RECEIVER/hooks/$pager-token\nretryMax: 2\nretryWaitMin: 50ms\nretryWaitMax: 100ms",
		"trigger.on-broken":     "- when: app.status.(\n  send: [app-deployed]",
	})
	h.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName}, StringData: map[string]string{"pager-token": "pager-s3cret"}})
	h.rcv.FailNext(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable)
	h.app("web", map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.pager": ""})
	h.eventually(90*time.Second, "web Synced and Healthy", func() bool { return settled(h.get("web")) })
	reqs := h.rcv.WaitFor(t, 3, 30*time.Second, func(q notifytest.Request) bool { return q.Path == "/hooks/pager-s3cret" })
	var warning string
	h.eventually(30*time.Second, "a Warning event on web", func() bool {
		for _, e := range h.events("web") {
			if strings.HasPrefix(e, "Warning "+notify.ReasonDeliveryFailed+" ") {
				warning = e
				return true
			}
		}
		return false
	})
	if !strings.Contains(warning, "on-sync-succeeded to pager failed after 3 attempt(s): ") || !strings.Contains(warning, "HTTP 503") || strings.Contains(warning, "pager-s3cret") {
		t.Errorf("event %q, want the trigger, the destination, the attempts and the status, without the token", warning)
	}
	for _, q := range reqs {
		if q.Status != http.StatusServiceUnavailable {
			t.Errorf("a try was answered %d; the receiver was down for all three", q.Status)
		}
	}
	if n := h.metrics.count("on-sync-succeeded pager false"); n != 1 {
		t.Errorf("failed deliveries counted %d, want 1", n)
	}
	// The broken trigger is reported on the ConfigMap, naming its key; the
	// rest of the settings work.
	h.eventually(30*time.Second, "a Warning event on "+notify.ConfigMapName, func() bool {
		for _, e := range h.events(notify.ConfigMapName) {
			if strings.HasPrefix(e, "Warning InvalidNotificationSetting "+notify.ConfigMapName+": trigger.on-broken: condition 0: when:") {
				return true
			}
		}
		return false
	})
	// Given up: no more tries, even as the app is looked at again.
	time.Sleep(3 * time.Second)
	if n := len(h.rcv.Requests()); n != 3 {
		t.Errorf("%d tries, want 3 (the first and retryMax 2)", n)
	}
}

// TestDeliveryNeverHoldsTheSync: while the receiver holds the request of
// on-sync-running, the sync goes on and ends, and on-deployed is sent
// once the receiver lets go; a new notifications controller (a restart,
// a new leader) sends nothing again. The new one keeps its own cache of
// the apps, as a notifications controller beside no Application
// controller does.
func TestDeliveryNeverHoldsTheSync(t *testing.T) {
	h := start(t, map[string]string{"service.webhook.hook": "url: RECEIVER/hooks"})
	h.rcv.Block()
	h.app("web", map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-running.hook": "",
		"notifications.argoproj.io/subscribe.on-deployed.hook":     "",
		"notifications.argoproj.io/subscribe.on-created.hook":      "",
	})
	h.rcv.WaitFor(t, 1, 60*time.Second, func(q notifytest.Request) bool { return true })
	h.eventually(90*time.Second, "web Synced and Healthy while the receiver holds its request", func() bool { return settled(h.get("web")) })
	h.rcv.Unblock()
	deployed := func(q notifytest.Request) bool { return strings.Contains(string(q.Body), "now runs revision") }
	h.rcv.WaitFor(t, 1, 30*time.Second, deployed)
	h.rcv.WaitFor(t, 1, 30*time.Second, func(q notifytest.Request) bool { return strings.Contains(string(q.Body), "was created") })
	h.eventually(30*time.Second, "the notified annotation", func() bool {
		return strings.Contains(h.get("web").Annotations[notify.AnnotationNotified], "on-deployed")
	})
	before := len(h.rcv.Requests())

	h.stopNotify()
	h.startNotify(notifyOptions{})
	time.Sleep(3 * time.Second) // three resyncs of the new controller
	if after := len(h.rcv.Requests()); after != before {
		t.Errorf("after a restart: %d requests, want %d (nothing sent twice)", after, before)
	}
	if got := filterCount(h.rcv.Requests(), deployed); got != 1 {
		t.Errorf("%d on-deployed, want 1", got)
	}
}

func filterCount(reqs []notifytest.Request, match func(notifytest.Request) bool) int {
	n := 0
	for _, q := range reqs {
		if match(q) {
			n++
		}
	}
	return n
}

// TestConfiguredLater: apps that exist before argocd-notifications-cm
// are looked at when it appears, not at a resync: an unconfigured
// controller does not look at apps again.
func TestConfiguredLater(t *testing.T) {
	h := startWith(t, nil, notifyOptions{shared: true, resync: time.Hour})
	h.app("web", map[string]string{"notifications.argoproj.io/subscribe.on-deployed.hook": ""})
	h.eventually(90*time.Second, "web Synced and Healthy", func() bool { return settled(h.get("web")) })
	if n := len(h.rcv.Requests()); n != 0 {
		t.Fatalf("%d requests without notification settings", n)
	}
	h.configure(map[string]string{"service.webhook.hook": "url: RECEIVER/hooks"})
	h.rcv.WaitFor(t, 1, 30*time.Second, func(q notifytest.Request) bool { return strings.Contains(string(q.Body), "now runs revision") })
}
