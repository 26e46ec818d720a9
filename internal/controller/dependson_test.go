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

// TestDependsOn checks that an app syncs only once the apps it depends on
// are Synced and Healthy, and that a cycle or an unknown app is a
// DependencyWait condition that keeps the app from syncing.
func TestDependsOn(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	files := map[string]string{"db/redis.yaml": slowDeployment}
	for _, name := range []string{"web", "ping", "pong", "orphan"} {
		files[name+"/cm.yaml"] = strings.ReplaceAll(guestbookConfigMap, "settings", name)
	}
	repo := testenv.NewGitRepo(t, files)
	add := func(name, deps string) {
		h.create(testApp{name: name, repoURL: repo.Dir, automated: true, annotations: map[string]string{AnnotationDependsOn: deps}})
	}
	add("web", "db")
	add("db", "")
	add("ping", "pong")
	add("pong", "ping")
	add("orphan", "ghost")

	t.Run("an app syncs after its dependency is healthy", func(t *testing.T) {
		t.Parallel()
		h := h.in(t)
		h.waitApp("db", 60*time.Second, "db Synced and Healthy", syncedHealthy)
		web := h.waitApp("web", 60*time.Second, "web Synced and Healthy", syncedHealthy)
		readyAt := podReadyTime(t, h, "app=redis")
		started := web.Status.History[0].DeployStartedAt.Time
		if started.Before(readyAt) {
			t.Errorf("web started syncing at %s, before db's pod was Ready at %s", started, readyAt)
		}
		if hasCondition(web, v1alpha1.ApplicationConditionDependencyWait) {
			t.Errorf("web still has a DependencyWait condition: %s", describe(web))
		}
	})
	conditions := map[string]struct{ app, want string }{
		"a cycle":        {app: "ping", want: "dependency cycle: ping -> pong -> ping"},
		"an unknown app": {app: "orphan", want: "ghost does not exist"},
	}
	for name, tc := range conditions {
		t.Run(name+" is a condition and nothing syncs", func(t *testing.T) {
			t.Parallel()
			h, app := h.in(t), tc.app
			got := h.waitApp(app, 30*time.Second, "a DependencyWait condition", func(a *v1alpha1.Application) bool {
				return hasCondition(a, v1alpha1.ApplicationConditionDependencyWait)
			})
			if msg := conditionMessage(got, v1alpha1.ApplicationConditionDependencyWait); !strings.Contains(msg, tc.want) {
				t.Errorf("DependencyWait = %q, want it to contain %q", msg, tc.want)
			}
			err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: app}, &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) || got.Status.OperationState != nil {
				t.Errorf("app %s synced while waiting on dependencies: ConfigMap %v, operation %+v", app, err, got.Status.OperationState)
			}
		})
	}
}
