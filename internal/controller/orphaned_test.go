package controller

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestIsOrphan(t *testing.T) {
	data, err := os.ReadFile("testdata/orphaned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name   string                         `json:"name"`
		Orphan bool                           `json:"orphan"`
		Ignore []v1alpha1.OrphanedResourceKey `json:"ignore"`
		Object map[string]any                 `json:"object"`
	}
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: tc.Object}
			if got := isOrphan(obj, tc.Ignore, "i1"); got != tc.Orphan {
				t.Errorf("isOrphan = %v, want %v", got, tc.Orphan)
			}
		})
	}
}

// TestOrphanedResourceWarning checks the project's orphanedResources
// warning: an object in the destination namespace that no app manages is
// counted, and the condition goes once the object is gone.
func TestOrphanedResourceWarning(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"web/cm.yaml": guestbookConfigMap})
	h.createProject("watched", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere,
		OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{Ignore: []v1alpha1.OrphanedResourceKey{{Kind: "Secret"}}}})
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "stray"}}
	ignored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "ignored"}}
	for _, o := range []client.Object{stray, ignored} {
		if err := h.c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	h.create(testApp{name: "web", repoURL: repo.Dir, project: "watched", automated: true})
	want := "Application has 1 orphaned resources"
	h.waitApp("web", 60*time.Second, "an orphaned-resource warning", func(a *v1alpha1.Application) bool {
		return syncedHealthy(a) && conditionMessage(a, v1alpha1.ApplicationConditionOrphanedResourceWarning) == want
	})
	if err := h.c.Delete(t.Context(), stray); err != nil {
		t.Fatal(err)
	}
	h.refresh("web")
	h.waitApp("web", 30*time.Second, "the warning cleared", func(a *v1alpha1.Application) bool {
		return !hasCondition(a, v1alpha1.ApplicationConditionOrphanedResourceWarning)
	})
}
