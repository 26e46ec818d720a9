package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestAppsInAnyNamespace: with application.namespaces matching team
// namespaces, apps there are reconciled when their project's
// sourceNamespaces permit it, tracked by Argo CD's instance name
// `<namespace>_<name>`; apps of the same name in two namespaces keep
// their objects apart (a sync, a deletion); a project that does not
// permit the namespace is Argo CD's UnknownError and nothing is applied;
// an app of a namespace no pattern matches is left alone.
func TestAppsInAnyNamespace(t *testing.T) {
	t.Parallel()
	env := testenv.Get(t)
	env.InstallCRDs(t)
	h := &harness{t: t, env: env, ns: env.Namespace(t), c: env.AppClient(t)}
	teamA, teamB, teamC, other := h.extraNamespace("team-a"), h.extraNamespace("team-b"), h.extraNamespace("team-c"), h.extraNamespace("other")
	h.ctrl, h.stop = h.runController(Options{ApplicationNamespaces: []string{h.ns + "-team-*"}})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/cm.yaml": guestbookConfigMap})
	h.createProject("teams", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere,
		SourceNamespaces: []string{teamA, teamB}})

	for _, ns := range []string{teamA, teamB, teamC, other, h.ns} {
		project := "teams"
		if ns == teamC || ns == other {
			project = "default" // permits no other namespace
		}
		h.createIn(ns, testApp{name: "guestbook", repoURL: repo.Dir, project: project, syncNow: true,
			finalizers: []string{v1alpha1.FinalizerResources}})
	}
	for _, ns := range []string{teamA, teamB, h.ns} {
		h.waitAppIn(ns, "guestbook", time.Minute, "synced and healthy", syncedHealthy)
		cm := &corev1.ConfigMap{}
		if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
			t.Fatalf("the ConfigMap of %s/guestbook: %v", ns, err)
		}
		want := ns + "_guestbook:/ConfigMap:" + ns + "/settings"
		if ns == h.ns {
			want = "guestbook:/ConfigMap:" + ns + "/settings"
		}
		if got := cm.Annotations[kube.AnnotationTrackingID]; got != want {
			t.Errorf("tracking id of %s/settings = %q, want %q", ns, got, want)
		}
	}
	denied := h.waitAppIn(teamC, "guestbook", 30*time.Second, "UnknownError", func(a *v1alpha1.Application) bool {
		return conditionMessage(a, v1alpha1.ApplicationConditionUnknownError) != ""
	})
	want := "application 'guestbook' in namespace '" + teamC + "' is not permitted to use project 'default'"
	if got := conditionMessage(denied, v1alpha1.ApplicationConditionUnknownError); got != want {
		t.Errorf("UnknownError = %q, want %q", got, want)
	}
	for _, ns := range []string{teamC, other} {
		if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ConfigMap of %s/guestbook: %v, want it never created", ns, err)
		}
	}
	if st := h.appIn(other, "guestbook").Status; st.ReconciledAt != nil || st.Sync.Status != "" || len(st.Conditions) > 0 {
		t.Errorf("an app of a namespace no pattern matches got a status: %+v", st)
	}

	// Deleting team-a's app deletes its objects alone.
	if err := h.c.Delete(context.Background(), h.appIn(teamA, "guestbook")); err != nil {
		t.Fatal(err)
	}
	h.waitGone(teamA, "guestbook")
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: teamA, Name: "settings"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("team-a's ConfigMap after its app's deletion: %v, want it deleted", err)
	}
	h.waitAppIn(teamB, "guestbook", 10*time.Second, "still synced and healthy", syncedHealthy)
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: teamB, Name: "settings"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("team-b's ConfigMap after team-a's app's deletion: %v", err)
	}
}

// extraNamespace creates namespace <h.ns>-suffix for the test, deleted
// when it ends (its apps' finalizers dropped first).
func (h *harness) extraNamespace(suffix string) string {
	h.t.Helper()
	name := h.ns + "-" + suffix
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"wavecd.io/test": "true"}}}
	if err := h.c.Create(ctx, ns); err != nil {
		h.t.Fatalf("create namespace %s: %v", name, err)
	}
	h.t.Cleanup(func() {
		var apps v1alpha1.ApplicationList
		if err := h.c.List(ctx, &apps, client.InNamespace(name)); err == nil {
			for i := range apps.Items {
				apps.Items[i].Finalizers = nil
				_ = h.c.Update(ctx, &apps.Items[i])
			}
		}
		_ = h.c.Delete(ctx, ns)
	})
	return name
}

// createIn creates the app in namespace ns, syncing into ns.
func (h *harness) createIn(ns string, a testApp) {
	h.t.Helper()
	c := *h
	c.ns = ns
	c.create(a)
}

func (h *harness) appIn(ns, name string) *v1alpha1.Application {
	h.t.Helper()
	c := *h
	c.ns = ns
	return c.app(name)
}

func (h *harness) waitAppIn(ns, name string, timeout time.Duration, what string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	h.t.Helper()
	c := *h
	c.ns = ns
	return c.waitApp(name, timeout, what, cond)
}

// waitGone waits until the app is deleted.
func (h *harness) waitGone(ns, name string) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for h.appIn(ns, name) != nil {
		if time.Now().After(deadline) {
			h.t.Fatalf("app %s/%s not deleted within a minute: %s", ns, name, describe(h.appIn(ns, name)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
