package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestSyncImpersonation turns on argocd-cm's sync impersonation and gives
// project team the service account deployer, which RBAC lets write
// ConfigMaps of the test's namespace only: a sync of ConfigMaps there
// succeeds, a sync of a Secret fails with the API server's refusal of the
// service account, and an app of a project that names no service account
// fails with Argo CD's message, nothing written.
func TestSyncImpersonation(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	h.stop()
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SettingsConfigMap, Namespace: h.ns},
			Data: map[string]string{"application.sync.impersonation.enabled": "true"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: h.ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: h.ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: h.ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: h.ns}}},
	} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	h.createProject("team", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere,
		DestinationServiceAccounts: []v1alpha1.ApplicationDestinationServiceAccount{
			{Server: "https://kubernetes.default.svc", Namespace: "other-*", DefaultServiceAccount: "other:nobody"},
			{Server: "https://kubernetes.default.svc", Namespace: h.ns, DefaultServiceAccount: "deployer"},
		}})
	h.createProject("nosa", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere})
	h.ctrl, h.stop = h.runController(Options{})

	repo := testenv.NewGitRepo(t, map[string]string{
		"guestbook/cm.yaml":  guestbookConfigMap,
		"secret/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: s3cr3t}\n",
		"unmapped/cm.yaml":   strings.Replace(guestbookConfigMap, "name: settings", "name: unmapped", 1),
	})
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, project: "team", syncNow: true})
	h.create(testApp{name: "secret", repoURL: repo.Dir, project: "team", syncNow: true})
	h.create(testApp{name: "unmapped", repoURL: repo.Dir, project: "nosa", syncNow: true})

	h.waitApp("guestbook", 60*time.Second, "synced as deployer", syncedHealthy)
	failed := func(a *v1alpha1.Application) bool {
		return a.Status.OperationState != nil && a.Status.OperationState.Phase.Completed()
	}
	sa := "system:serviceaccount:" + h.ns + ":deployer"
	if st := h.waitApp("secret", 60*time.Second, "the sync refused", failed).Status.OperationState; st.Phase == v1alpha1.OperationSucceeded ||
		!strings.Contains(st.Message, "forbidden") || !strings.Contains(st.Message, sa) {
		t.Errorf("secret: %s %q, want a refusal of %s", st.Phase, st.Message, sa)
	}
	want := "no matching service account found for destination server https://kubernetes.default.svc and namespace " + h.ns
	if st := h.waitApp("unmapped", 60*time.Second, "the sync refused", failed).Status.OperationState; st.Phase == v1alpha1.OperationSucceeded ||
		!strings.Contains(st.Message, want) {
		t.Errorf("unmapped: %s %q, want %q", st.Phase, st.Message, want)
	}
	for _, name := range []string{"unmapped"} {
		if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &corev1.ConfigMap{}); err == nil {
			t.Errorf("ConfigMap %s was written without a service account", name)
		}
	}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "token"}, &corev1.Secret{}); err == nil {
		t.Error("Secret token was written, which deployer may not write")
	}
}
