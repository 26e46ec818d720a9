package controller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestRegisteredDestination deploys through a registered cluster Secret
// that points back at the test cluster under another name, so a remote
// target (its own clients and live cache) is built without a second
// cluster: an app naming an unknown cluster is an InvalidSpecError until
// the Secret appears, syncs through it, turns invalid again when the
// Secret goes, and can still be deleted (its objects stay, as in Argo CD).
func TestRegisteredDestination(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"remote/cm.yaml": strings.ReplaceAll(guestbookConfigMap, "settings", "remote")})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "remote", Finalizers: []string{v1alpha1.FinalizerResources}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo.Dir, Path: "remote", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: "mirror", Namespace: h.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
	}
	if err := h.c.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	h.waitApp("remote", 30*time.Second, "an InvalidSpecError", func(a *v1alpha1.Application) bool {
		return strings.Contains(conditionMessage(a, v1alpha1.ApplicationConditionInvalidSpecError),
			"application destination spec for remote is invalid: cluster not found: there are no clusters with this name: mirror")
	})
	secret := h.mirrorSecret()
	h.waitApp("remote", 30*time.Second, "Synced and Healthy through the Secret", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && !hasCondition(a, v1alpha1.ApplicationConditionInvalidSpecError)
	})
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "remote"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("ConfigMap of the app: %v", err)
	}
	if err := h.c.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	h.waitApp("remote", 30*time.Second, "an InvalidSpecError again", func(a *v1alpha1.Application) bool {
		return hasCondition(a, v1alpha1.ApplicationConditionInvalidSpecError)
	})
	if err := h.c.Delete(context.Background(), h.app("remote")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for h.app("remote") != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the app of an unregistered cluster was not deleted: %s", describe(h.app("remote")))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "remote"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap of the app: %v, want it left in place", err)
	}
}

// mirrorSecret registers the test cluster again, by its URL and the
// test's own credentials, as cluster "mirror".
func (h *harness) mirrorSecret() *corev1.Secret {
	h.t.Helper()
	cfg := h.env.Config
	conf, err := json.Marshal(cluster.Config{BearerToken: cfg.BearerToken, TLSClientConfig: cluster.TLSClientConfig{CAData: cfg.CAData}})
	if err != nil {
		h.t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "cluster-mirror", Labels: map[string]string{cluster.LabelSecretType: cluster.SecretTypeCluster}},
		Data:       map[string][]byte{"name": []byte("mirror"), "server": []byte(cfg.Host), "config": conf},
	}
	if err := h.c.Create(context.Background(), s); err != nil {
		h.t.Fatal(err)
	}
	return s
}
