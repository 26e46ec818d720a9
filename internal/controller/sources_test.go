package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/testenv"
)

// TestMirrorsFromSettings: an app naming a remote URL is served from the
// local repository that argocd-cm's wavecd.mirrors maps it to.
func TestMirrorsFromSettings(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	h.stop()
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/configmap.yaml": guestbookConfigMap})
	const url = "https://git.example.test/org/guestbook.git"
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: SettingsConfigMap, Namespace: h.ns},
		Data:       map[string]string{keyMirrors: url + ": " + repo.Dir + "\n"},
	}
	if err := h.c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	h.ctrl, h.stop = h.runController(Options{})
	h.create(testApp{name: "guestbook", repoURL: url, automated: true})
	h.waitApp("guestbook", 60*time.Second, "Synced and Healthy from the mirror", syncedHealthy)
	got := &corev1.ConfigMap{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "settings"}, got); err != nil {
		t.Fatalf("ConfigMap from the mirrored repository: %v", err)
	}
}
