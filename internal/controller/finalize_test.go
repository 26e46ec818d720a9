package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestFinalizer deletes synced apps: with a resources finalizer the app's
// objects go before the app, without one they stay.
func TestFinalizer(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	tests := map[string]struct {
		finalizers  []string
		objectsStay bool
	}{
		"foreground": {finalizers: []string{v1alpha1.FinalizerResources}},
		"background": {finalizers: []string{v1alpha1.FinalizerResourcesBackground}},
		"none":       {objectsStay: true},
	}
	files := map[string]string{}
	for name := range tests {
		files[name+"/cm.yaml"] = strings.ReplaceAll(guestbookConfigMap, "settings", name)
	}
	repo := testenv.NewGitRepo(t, files)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := h.in(t)
			ctx := context.Background()
			h.create(testApp{name: name, repoURL: repo.Dir, automated: true, finalizers: tc.finalizers})
			app := h.waitApp(name, 30*time.Second, "Synced and Healthy", syncedHealthy)
			cm := client.ObjectKey{Namespace: h.ns, Name: name}
			if err := h.c.Get(ctx, cm, &corev1.ConfigMap{}); err != nil {
				t.Fatal(err)
			}
			if err := h.c.Delete(ctx, app); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 30*time.Second, "the app gone", func() bool { return h.app(name) == nil })
			err := h.c.Get(ctx, cm, &corev1.ConfigMap{})
			switch {
			case tc.objectsStay && err != nil:
				t.Errorf("ConfigMap of an app deleted without finalizer: %v, want it kept", err)
			case !tc.objectsStay && !apierrors.IsNotFound(err):
				t.Errorf("ConfigMap when the app with %v was gone: %v, want it deleted first", tc.finalizers, err)
			}
		})
	}
}
